#!/usr/bin/env bash
# Runs the test suites against jukeboxd built for aarch64, under qemu-user:
#   scripts/aarch64-tests.sh [--end-to-end] [--skip REGEX]… [--filter REGEX]
# By default it cross-builds the test bundle with the SDK of scripts/cross-sdk.sh (Debian's
# Swift 6.2.3) and runs every suite on an emulated aarch64 CPU: run it before a release
# (docs/ci.md). With --end-to-end it builds no aarch64 test bundle: this machine's own test
# bundle (`swift build --build-tests`) runs the end-to-end suites natively, and the programs they
# start are aarch64 ones that binfmt_misc hands to qemu-user. That is what CI runs.
# Either way the end-to-end suites start the release aarch64 daemon and client (those of the
# arm64 package), and what the tests run besides (curl, mosquitto, PulseAudio, Chromium…) is
# this machine's own.
# --skip leaves out the suites (or tests) whose names match; .ci/run says which, and why.
# --filter runs only the suites whose names match (to try one suite again).
# Needs root (or sudo) for the chroot the builds run in.
set -euo pipefail
cd "$(dirname "$0")/.."
skips=()
left_out='^$'
only='.'
suites='.'
native=
for argument in "$@"; do [ "$argument" = --end-to-end ] && native=yes; done
# This machine's test bundle, built by whoever ran this (not by root through sudo, which
# would leave .build/ to root).
if [ -n "$native" ] && [ -z "${SUDO_USER:-}" ]; then swift build --build-tests; fi
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
while [ $# -gt 0 ]; do
    case "$1" in
        --end-to-end) suites='^EndToEndTests\.'; shift ;;
        --skip) skips+=(--skip "$2"); left_out="$left_out|$2"; shift 2 ;;
        --filter) only="$2"; shift 2 ;;
        *) echo "usage: scripts/aarch64-tests.sh [--end-to-end] [--skip REGEX]… [--filter REGEX]" >&2; exit 64 ;;
    esac
done
scripts/install-deps.sh --tests >&2
scripts/cross-sdk.sh
. scripts/cross-common.sh

if [ -n "$native" ]; then
    bundle=.build/debug/jukeboxdPackageTests.xctest
    [ -x "$bundle" ] || { echo "aarch64-tests: no $bundle; run swift build --build-tests first" >&2; exit 66; }
else
    # Debian's packages lack lib_Testing_Foundation.so, the overlay that `import Testing` beside
    # `import Foundation` pulls in (it adds attachments of Foundation types, which no test uses),
    # so the bundle is built without cross-import overlays. Its C (BoringSSL, above all) is
    # optimised, as a debug build's is not: the web remote's 600 000-round password hash takes 7 s
    # under qemu so, and 20 s at -O0, for the same build time.
    pkgconfig="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
    in_root "cd $PWD && PKG_CONFIG_PATH=$pkgconfig swift build --scratch-path /build-arm64-tests --swift-sdk aarch64-unknown-linux-gnu \
        --build-tests -Xcc -O2 -Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays"
    bundle="$root/build-arm64-tests/aarch64-unknown-linux-gnu/debug/jukeboxdPackageTests.xctest"
fi

# The end-to-end suites start the release programs that go into the arm64 package, as
# scripts/cross-build.sh makes them (at once, if they are current), rather than the debug
# ones beside the bundle: they are what a Raspberry Pi runs, and under qemu they make the
# suites that start them a third to a half quicker.
scripts/cross-build.sh
register_aarch64

# Every aarch64 program (the daemons and clients the tests start, and the tests themselves
# unless --end-to-end) runs under qemu-user through binfmt_misc, against the sysroot. Tests
# that start a program as another user clear its environment, so the sysroot is named where
# qemu looks without one, /etc/qemu-binfmt/aarch64, for the length of the run (unless
# something is there already). The programs' RUNPATH names the Swift runtime by its path in
# the sid root, which the sysroot maps onto itself.
mkdir -p "$root$sysroot/opt"
ln -sfn .. "$root$sysroot/opt/jukeboxd-sysroot-arm64"
interp=/etc/qemu-binfmt/aarch64
made_interp=
if [ ! -e "$interp" ] && [ ! -L "$interp" ]; then
    mkdir -p /etc/qemu-binfmt
    ln -s "$root$sysroot" "$interp"
    made_interp=yes
fi
export QEMU_LD_PREFIX="$root$sysroot"
export JUKEBOXD_TEST_BINARIES="$work/aarch64"
finish() {
    if [ -n "$made_interp" ]; then rm -f "$interp"; rmdir /etc/qemu-binfmt 2>/dev/null || true; fi
    unmount_all
}
trap finish EXIT

# Each suite in its own process (its tests in parallel, as `swift test` runs them): all of
# them at once on an emulated CPU would run most past their time limits. The end-to-end
# suites run one at a time, as they start daemons, brokers and browsers and keep to the
# clock. The other modules' suites run two at a time: under emulation, most of such a suite's
# time is the test bundle starting, on one core.
logs="$work/aarch64-tests"
rm -rf "$logs"
mkdir -p "$logs"
started=$SECONDS
# The number of tests in a run's summary line.
counted='s/^[^ ]* Test run with \([0-9]*\) tests\? .*/\1/p'
run_suite() {  # SUITE: runs it, prints a line, and leaves SUITE.failed beside its log if it failed
    local suite=$1 begun=$SECONDS outcome=passed tests
    if ! "$bundle" --testing-library swift-testing --filter "^$suite/" "${skips[@]}" > "$logs/$suite.log" 2>&1; then
        outcome=FAILED
        : > "$logs/$suite.failed"
        grep -E '✘|↳' "$logs/$suite.log" | head -n 40 >&2
    fi
    tests=$(sed -n "$counted" "$logs/$suite.log" | tail -n 1)
    echo "aarch64-tests: $suite $outcome (${tests:-0} tests, $((SECONDS - begun)) s)${CI_STARTED_AT:+, $(( $(date +%s) - CI_STARTED_AT )) s into CI}"
    return 0
}
# The suites with a test left to run (the listing does not apply --skip).
for suite in $("$bundle" --testing-library swift-testing --list-tests | grep -Ev "$left_out" | sed 's|/.*||' | sort -u | grep -E "$suites" | grep -E "$only"); do
    case "$suite" in
        EndToEndTests.*) wait; run_suite "$suite" ;;
        *)
            while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
            run_suite "$suite" &
            ;;
    esac
done
wait
ran=$(cat "$logs"/*.log 2>/dev/null | sed -n "$counted" | awk '{ n += $1 } END { print n + 0 }')
suites=$(find "$logs" -name '*.log' | wc -l)
failed=($(find "$logs" -name '*.failed' -printf '%f\n' | sed 's/\.failed$//' | sort))
echo "aarch64-tests: $ran tests in $suites suites ran under qemu-user in $((SECONDS - started)) s; ${#failed[@]} suites failed${failed[*]:+: ${failed[*]}} (logs in $logs)"
[ ${#failed[@]} -eq 0 ]
