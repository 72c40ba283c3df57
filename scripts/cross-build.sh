#!/usr/bin/env bash
# Cross-builds jukeboxd and jukebox for aarch64 (release, Swift runtime linked in) with the SDK
# that scripts/cross-sdk.sh makes, and prints where the binaries are and which glibc symbol
# versions they need. Needs root (or sudo) for the chroot.
#   scripts/cross-build.sh            # makes the SDK first if it is not there
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
scripts/cross-sdk.sh
. scripts/cross-common.sh

out="$work/aarch64"
mkdir -p "$out"
# SwiftPM reads PKG_CONFIG_PATH (not PKG_CONFIG_LIBDIR): the sysroot's arm64 .pc files.
pkgconfig="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
for product in jukeboxd jukebox; do
    in_root "cd $PWD && PKG_CONFIG_PATH=$pkgconfig swift build --scratch-path /build-arm64 --swift-sdk aarch64-unknown-linux-gnu \
        -c release --static-swift-stdlib --product $product"
    cp "$root/build-arm64/aarch64-unknown-linux-gnu/release/$product" "$out/$product"
done
for product in jukeboxd jukebox; do
    needs=$(aarch64-linux-gnu-objdump -T "$out/$product" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 || true)
    echo "$out/$product: $(du -h "$out/$product" | cut -f1), needs ${needs:-no glibc (static)}"
done
