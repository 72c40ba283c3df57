#!/usr/bin/env bash
# Cross-builds the test bundle for aarch64 with the SDK of scripts/cross-sdk.sh, and runs it
# under qemu-user: the same suites as `swift test`, built by Debian's Swift 6.2.3, on an
# emulated aarch64 CPU, with the release aarch64 daemon and client (those of the arm64
# package) that the end-to-end suites start.
# What the tests run besides (curl, mosquitto, PulseAudio, Chromium…) is this machine's own.
#   scripts/aarch64-tests.sh [--skip SUITE]… [--filter REGEX]
#   scripts/aarch64-tests.sh --build
# --skip leaves out the suites (or tests) whose names match; .ci/run says which, and why.
# --filter runs only the suites whose names match (to try one suite again).
# --build only builds the test bundle (.ci/run does so while other steps run).
# Needs root (or sudo) for the chroot the build runs in.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
skips=()
left_out='^$'
only='.'
build_only=
while [ $# -gt 0 ]; do
    case "$1" in
        --skip) skips+=(--skip "$2"); left_out="$left_out|$2"; shift 2 ;;
        --filter) only="$2"; shift 2 ;;
        --build) build_only=yes; shift ;;
        *) echo "usage: scripts/aarch64-tests.sh [--skip REGEX]… [--filter REGEX] | --build" >&2; exit 64 ;;
    esac
done
scripts/install-deps.sh --tests >&2
scripts/cross-sdk.sh
. scripts/cross-common.sh

# Debian's packages lack lib_Testing_Foundation.so, the overlay that `import Testing` beside
# `import Foundation` pulls in (it adds attachments of Foundation types, which no test uses),
# so the bundle is built without cross-import overlays. Its C (BoringSSL, above all) is
# optimised, as a debug build's is not: the web remote's 600 000-round password hash takes 7 s
# under qemu so, and 20 s at -O0, for the same build time.
pkgconfig="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
in_root "cd $PWD && PKG_CONFIG_PATH=$pkgconfig swift build --scratch-path /build-arm64-tests --swift-sdk aarch64-unknown-linux-gnu \
    --build-tests -Xcc -O2 -Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays"
products="$root/build-arm64-tests/aarch64-unknown-linux-gnu/debug"
[ -n "$build_only" ] && { echo "aarch64-tests: built $products/jukeboxdPackageTests.xctest"; exit 0; }

# The end-to-end suites start the release programs that go into the arm64 package, as
# scripts/cross-build.sh makes them (at once, if they are current), rather than the debug
# ones beside the bundle: they are what a Raspberry Pi runs, and under qemu they make the
# suites that start them a third to a half quicker.
scripts/cross-build.sh
register_aarch64

# Every aarch64 program, the tests and the daemons they start, runs under qemu-user (through
# binfmt_misc) against the sysroot. Tests that start a program as another user clear its
# environment, so the sysroot is named where qemu looks without one, /etc/qemu-binfmt/aarch64,
# for the length of the run (unless something is there already). The programs' RUNPATH names
# the Swift runtime by its path in the sid root, which the sysroot maps onto itself.
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
bundle="$products/jukeboxdPackageTests.xctest"

# One suite at a time, each in its own process (its tests in parallel, as `swift test` runs
# them): all of them at once on an emulated CPU would run most past their time limits.
logs="$work/aarch64-tests"
rm -rf "$logs"
mkdir -p "$logs"
started=$SECONDS
failed=()
ran=0
suites=0
# The suites with a test left to run (the listing does not apply --skip).
for suite in $("$bundle" --testing-library swift-testing --list-tests | grep -Ev "$left_out" | sed 's|/.*||' | sort -u | grep -E "$only"); do
    begun=$SECONDS
    if "$bundle" --testing-library swift-testing --filter "^$suite/" "${skips[@]}" > "$logs/$suite.log" 2>&1; then
        outcome=passed
    else
        outcome=FAILED
        failed+=("$suite")
        grep -E '✘|↳' "$logs/$suite.log" | head -n 40 >&2
    fi
    tests=$(sed -n 's/^[^ ]* Test run with \([0-9]*\) tests\? .*/\1/p' "$logs/$suite.log" | tail -n 1)
    tests=${tests:-0}
    ran=$((ran + tests))
    suites=$((suites + 1))
    echo "aarch64-tests: $suite $outcome ($tests tests, $((SECONDS - begun)) s)"
done
echo "aarch64-tests: $ran tests in $suites suites ran under qemu-user in $((SECONDS - started)) s; ${#failed[@]} suites failed${failed[*]:+: ${failed[*]}} (logs in $logs)"
[ ${#failed[@]} -eq 0 ]
