#!/usr/bin/env bash
# Cross-builds the test bundle for aarch64 with the SDK of scripts/cross-sdk.sh, and runs it
# under qemu-user: the same suites as `swift test`, built by Debian's Swift 6.2.3, on an
# emulated aarch64 CPU, with the aarch64 daemon and client that the end-to-end suites start.
# What the tests run besides (curl, mosquitto, PulseAudio, Chromium…) is this machine's own.
#   scripts/aarch64-tests.sh [--skip SUITE]… [--filter REGEX]
# --skip leaves out the suites (or tests) whose names match; .ci/run says which, and why.
# Needs root (or sudo) for the chroot the build runs in.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
scripts/install-deps.sh --tests >&2
scripts/cross-sdk.sh
. scripts/cross-common.sh
register_aarch64

# Debian's packages lack lib_Testing_Foundation.so, the overlay that `import Testing` beside
# `import Foundation` pulls in (it adds attachments of Foundation types, which no test uses),
# so the bundle is built without cross-import overlays.
pkgconfig="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
in_root "cd $PWD && PKG_CONFIG_PATH=$pkgconfig swift build --scratch-path /build-arm64-tests --swift-sdk aarch64-unknown-linux-gnu \
    --build-tests -Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays"
products="$root/build-arm64-tests/aarch64-unknown-linux-gnu/debug"

# Every aarch64 program, the tests and the daemons they start, runs under qemu-user (through
# binfmt_misc) against the sysroot; the Swift runtime is found there.
export QEMU_LD_PREFIX="$root$sysroot"
export LD_LIBRARY_PATH=/usr/lib/swift/linux
started=$(date +%s)
status=0
"$products/jukeboxdPackageTests.xctest" --testing-library swift-testing "$@" || status=$?
echo "aarch64-tests: the test bundle ran under qemu-user in $(( $(date +%s) - started )) s, exit status $status"
exit "$status"
