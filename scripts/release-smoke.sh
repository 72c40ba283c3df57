#!/usr/bin/env bash
# Builds jukeboxd as docs/raspberry-pi.md does (release, static Swift runtime, linked with lld
# and scripts/link-order.txt) and checks the result runs: the demo session is checked, played
# from through ALSA's file plugin, answers the CLI and the web remote, and stops cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib
bin=.build/release
work=$(mktemp -d)
daemon=
finish() {
    status=$?
    if [ "$status" -ne 0 ]; then
        echo "release smoke test failed (status $status); the daemon's log:" >&2
        cat "$work/log" >&2 2>/dev/null || true
    fi
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null || true
    rm -rf "$work"
}
trap finish EXIT
# No sound card here: the device is checked as null (a missing one is the device tests').
"$bin/jukeboxd" --check clips/session.json --device null
"$bin/jukeboxd" clips/session.json --socket "$work/c.sock" --state "$work/state.json" \
    --device "file:FILE=$work/out.raw,FORMAT=raw" --http 127.0.0.1:0 2>"$work/log" &
daemon=$!
wait_for() {
    for _ in $(seq 1 100); do grep -q "$1" "$work/log" && return 0; sleep 0.1; done
    echo "release smoke test: never logged \"$1\":" >&2; cat "$work/log" >&2; exit 1
}
wait_for "web remote listening"
port=$(sed -n 's/.*web remote listening on .*(port \([0-9]*\)).*/\1/p' "$work/log")
clip=$("$bin/jukebox" --socket "$work/c.sock" --json clips | python3 -c 'import json, sys; print(json.load(sys.stdin)["clips"][0]["id"])')
"$bin/jukebox" --socket "$work/c.sock" play "$clip"
wait_for "played $clip"
# Over HTTPS, trusting the certificate authority the daemon made beside its state.
status=$(curl -sS --cacert "$work/state.tls/ca.crt" -X POST "https://127.0.0.1:$port/rpc" -d '{"jsonrpc":"2.0","id":1,"method":"status"}')
echo "$status" | grep -q '"played":1' || { echo "release smoke test: /rpc status does not say one clip played: $status" >&2; exit 1; }
test -s "$work/out.raw" || { echo "release smoke test: nothing reached $work/out.raw" >&2; exit 1; }
kill -TERM "$daemon"
wait "$daemon" || { echo "release smoke test: jukeboxd exited with status $? after SIGTERM" >&2; exit 1; }
daemon=
echo "release build: OK ($(du -h "$bin/jukeboxd" | cut -f1) daemon)"
