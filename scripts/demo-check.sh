#!/usr/bin/env bash
# CI: the README's set-up commands as written. `scripts/test.sh` is CI's test step; this runs
# the demo the README gives for a machine without a sound card, bounded: it must start, play a
# clip asked for with `jukebox`, say it played, and end by itself with status 0.
set -euo pipefail
cd "$(dirname "$0")/.."
for command in "scripts/demo.sh --no-sound-card" "scripts/test.sh"; do
    grep -q "^$command" README.md || { echo "demo-check: the README no longer gives \`$command\`" >&2; exit 1; }
done
work=$(mktemp -d)
demo=
finish() {
    [ -n "$demo" ] && kill "$demo" 2>/dev/null || true
    rm -rf "$work"
}
trap finish EXIT
scripts/demo.sh --no-sound-card --duration 20s --socket "$work/c.sock" --state "$work/state.json" >"$work/log" 2>&1 &
demo=$!
n=0
until grep -q "control socket listening" "$work/log"; do
    n=$((n + 1))
    if [ $n -gt 1200 ] || ! kill -0 "$demo" 2>/dev/null; then echo "demo-check: the demo did not start:" >&2; cat "$work/log" >&2; exit 1; fi
    sleep 0.1
done
.build/debug/jukebox --socket "$work/c.sock" play water
status=0
wait "$demo" || status=$?
demo=
cat "$work/log"
[ "$status" = 0 ] || { echo "demo-check: the demo ended with status $status" >&2; exit 1; }
grep -q 'played water' "$work/log" || { echo "demo-check: the demo never played water" >&2; exit 1; }
grep -q 'device "pulse"' "$work/log" || { echo "demo-check: the demo did not play to the null sink" >&2; exit 1; }
echo "demo-check: scripts/demo.sh --no-sound-card started, played water at a sound card's pace, and stopped after 20 s"
