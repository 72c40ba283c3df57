#!/usr/bin/env bash
# Makes what jukeboxd is cross-built for aarch64 with, from Debian's own archive only:
#   - a sid root (debootstrap): Debian's Swift 6.2.3 (`swiftlang`) runs only there, since it
#     needs glibc 2.42, and its compiler must be the version of the aarch64 Swift modules;
#   - a trixie arm64 sysroot: trixie's -dev packages, unpacked with dpkg -x, so the binaries
#     need no newer glibc than Debian 13 / Raspberry Pi OS trixie has (bookworm's 2.36 is too
#     old for Debian's aarch64 Swift runtime, which needs 2.38);
#   - Debian's aarch64 Swift runtime and modules (`swiftlang:arm64`, `libswiftlang:arm64`);
#   - a Swift SDK bundle naming them (`-use-ld=lld`), installed in the sid root.
# Each step is skipped when its result is already there, so it can be run again at no cost.
# Everything lives in .build-cross/ (ignored by git). Needs root (or sudo): debootstrap,
# chroot and mounts. Then scripts/cross-build.sh builds with it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
. scripts/cross-common.sh

scripts/install-deps.sh debootstrap qemu-user-static binutils-aarch64-linux-gnu python3
mkdir -p "$work"

# The Debian archive this machine's apt uses, so nothing comes from anywhere else.
mirror=$(debian_mirror)
[ -n "$mirror" ] || { echo "cross-sdk: no Debian archive found in /etc/apt/sources.list{,.d}; add one" >&2; exit 69; }

# 1. The sid root with Debian's Swift and lld. (Its /usr/bin/swift is a link to an absolute
#    path, which names the host's own folder when read from outside the root.)
if [ ! -x "$root/usr/libexec/swift/bin/swift" ]; then
    if [ ! -x "$root/usr/bin/apt-get" ]; then
        remove_root "$root"
        debootstrap --variant=minbase sid "$root" "$mirror"
    fi
    # The archive's Release file may be older than apt allows.
    echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99jukeboxd"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        swiftlang libc6-dev pkg-config git ca-certificates lld"
fi

# 2. The trixie arm64 sysroot: the -dev packages jukeboxd builds against, with what they need,
#    downloaded by an apt of their own (arm64, trixie, nothing installed) and unpacked.
sysroot_host="$root$sysroot"
if [ ! -e "$sysroot_host/usr/lib/aarch64-linux-gnu/libical.so" ] || [ ! -e "$sysroot_host/usr/lib/aarch64-linux-gnu/libavahi-client.so" ] || [ ! -e "$sysroot_host/usr/lib/aarch64-linux-gnu/libz.so" ]; then
    apt_dir="$root/opt/trixie-arm64"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc"
    : > "$apt_dir/status"
    echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" > "$apt_dir/etc/sources.list"
    cat > "$apt_dir/apt.conf" <<EOF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Dir::State "/opt/trixie-arm64";
Dir::State::Lists "/opt/trixie-arm64/lists";
Dir::State::status "/opt/trixie-arm64/status";
Dir::Cache "/opt/trixie-arm64";
Dir::Cache::Archives "/opt/trixie-arm64/archives";
Dir::Etc::SourceList "/opt/trixie-arm64/etc/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
EOF
    in_root "export APT_CONFIG=/opt/trixie-arm64/apt.conf; apt-get update -qq && apt-get install -y -d -qq $sysroot_packages"
    rm -rf "$sysroot_host"
    mkdir -p "$sysroot_host"
    for deb in "$apt_dir"/archives/*.deb; do dpkg -x "$deb" "$sysroot_host"; done
    ln -sfn usr/lib "$sysroot_host/lib"
    # qemu's -L falls back to the host's files, whose ALSA configuration names plugins the
    # sysroot lacks; an empty conf.d keeps the sysroot's own.
    mkdir -p "$sysroot_host/etc/alsa/conf.d"
fi

# 3. Debian's aarch64 Swift runtime, modules and compiler resources, from sid (the compiler's
#    own version), into the sysroot where swift-sdk.json names them.
if [ ! -e "$sysroot_host/usr/lib/swift/linux/aarch64/swiftrt.o" ]; then
    in_root "rm -rf /tmp/swift-arm64 && mkdir -p /tmp/swift-arm64 && cd /tmp/swift-arm64 && \
        { [ \$(dpkg --print-architecture) = arm64 ] || dpkg --add-architecture arm64; } && apt-get update -qq && apt-get download -qq swiftlang:arm64 libswiftlang:arm64 && \
        for deb in *.deb; do dpkg -x \$deb stage; done"
    stage="$root/tmp/swift-arm64/stage/usr/libexec/swift/lib"
    rm -rf "$sysroot_host/usr/lib/swift" "$sysroot_host/usr/lib/swift_static" "$sysroot_host/usr/lib/clang"
    cp -a "$stage/swift" "$sysroot_host/usr/lib/swift"
    cp -a "$stage/swift_static" "$sysroot_host/usr/lib/swift_static"
    # swift/clang links to ../clang/17: the C headers the compiler itself provides.
    cp -a "$stage/clang" "$sysroot_host/usr/lib/clang"
    rm -rf "$root/tmp/swift-arm64"
fi

# 4. The SDK bundle, installed in the sid root.
bundle_host="$root$bundle"
# (Not in a pipeline: a subshell's mounts would outlive it.)
in_root "swift sdk list" > "$work/sdks"
if ! grep -qx "$sdk_name" "$work/sdks"; then
    mkdir -p "$bundle_host/aarch64"
    cat > "$bundle_host/info.json" <<EOF
{ "schemaVersion": "1.0", "artifacts": { "$sdk_name": { "type": "swiftSDK", "version": "6.2.3", "variants": [ { "path": "aarch64" } ] } } }
EOF
    cat > "$bundle_host/aarch64/swift-sdk.json" <<EOF
{ "schemaVersion": "4.0", "targetTriples": { "aarch64-unknown-linux-gnu": {
  "sdkRootPath": "$sysroot", "swiftResourcesPath": "$sysroot/usr/lib/swift", "swiftStaticResourcesPath": "$sysroot/usr/lib/swift_static",
  "toolsetPaths": ["toolset.json"] } } }
EOF
    # Without lld: "ld.bfd: unrecognised emulation mode: aarch64linux".
    echo '{ "schemaVersion": "1.0", "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] } }' > "$bundle_host/aarch64/toolset.json"
    in_root "swift sdk install $bundle"
fi
echo "cross-sdk: the aarch64 Swift SDK \"$sdk_name\" is ready in $root"
