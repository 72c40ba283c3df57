#!/usr/bin/env bash
# Proves that a test run killed outright leaves nothing behind: starts the suites that run
# brokers, daemons, MPDs and the PulseAudio rig, SIGKILLs the test process while they run,
# then checks that every program it had started is gone (the guard of
# Tests/JukeboxTestSupport/TestProcesses.swift kills their group), and that the next run
# removes the killed run's test folders. Run after the tests are built (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=${TMPDIR:-/tmp}
tmp=${tmp%/}
log=$(mktemp)
runner=
# However this ends, the test run it started ends with it.
finish() {
    rm -f "$log"
    if [ -n "$runner" ]; then
        pkill -KILL -P "$runner" 2>/dev/null || true
        kill -KILL "$runner" 2>/dev/null || true
    fi
}
trap finish EXIT

# The descendants of PID, one per line (not PID itself).
descendants() {
    local pid=$1 child
    for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}
# PID's command line, or nothing once it has gone.
command_of() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null || true; }
# How many test folders the test process PID made. find fails when a folder goes while it
# reads /tmp (the tests remove theirs as they end), which is no reason to stop here.
folders_of() { { find "$tmp" -maxdepth 1 -name "jukebox-test-$1-*" 2>/dev/null || true; } | wc -l; }
# Whether PID still runs (a zombie waiting for init counts as gone).
running() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

swift test --skip-build --filter 'MQTTFrontEndTests|DuckRigTests|RealTimeTests|JukeboxClientTests' >"$log" 2>&1 &
runner=$!
# The test process, and the guard it starts first. (swift test runs the bundle twice: first
# for XCTest, which has no tests here and ends at once, then for Swift Testing.)
xctest=
for _ in $(seq 1 600); do
    xctest=$(for pid in $(descendants "$runner"); do
        if command_of "$pid" | grep -q 'PackageTests\.xctest.*--testing-library swift-testing'; then echo "$pid"; fi
    done | sed -n 1p)
    [ -n "$xctest" ] && break
    sleep 0.1
done
[ -n "$xctest" ] || { echo "test-kill-check: the test process never started" >&2; cat "$log" >&2; exit 1; }
# Wait until it runs a good number of programs: brokers, daemons, players.
started=()
for _ in $(seq 1 1200); do
    mapfile -t started < <(descendants "$xctest")
    guard=$(for pid in "${started[@]}"; do
        if command_of "$pid" | grep -q 'jukebox-test-guard'; then echo "$pid"; fi
    done | sed -n 1p)
    if [ -n "$guard" ]; then
        # The guard's group holds what was started through it, wherever its parent is now.
        mapfile -t grouped < <(ps -e -o pid=,pgid= | awk -v g="$guard" '$2 == g { print $1 }')
        started=($(printf '%s\n' "${started[@]}" "${grouped[@]}" | sort -un))
    fi
    [ "${#started[@]}" -ge 10 ] && break
    sleep 0.1
done
[ "${#started[@]}" -ge 10 ] || { echo "test-kill-check: the tests started only ${#started[@]} programs" >&2; cat "$log" >&2; exit 1; }
folders=$(folders_of "$xctest")
echo "test-kill-check: killing the test process $xctest while it runs ${#started[@]} programs and holds $folders test folders"
kill -KILL "$xctest"
wait "$runner" || true
left=()
for _ in $(seq 1 100); do
    left=()
    for pid in "${started[@]}"; do running "$pid" && left+=("$pid"); done
    [ "${#left[@]}" -eq 0 ] && break
    sleep 0.1
done
if [ "${#left[@]}" -gt 0 ]; then
    echo "test-kill-check: ${#left[@]} programs outlived the killed test process:" >&2
    for pid in "${left[@]}"; do echo "  $pid $(command_of "$pid")" >&2; kill -KILL "$pid" 2>/dev/null || true; done
    exit 1
fi
echo "test-kill-check: none of the ${#started[@]} programs is left"
# The next run removes the killed run's folders.
swift test --skip-build --filter 'SetupScriptTests' >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
remaining=$(folders_of "$xctest")
if [ "$remaining" -gt 0 ]; then
    echo "test-kill-check: the next run left $remaining of the killed run's $folders test folders" >&2
    exit 1
fi
echo "test-kill-check: the next run removed the killed run's $folders test folders"
