#!/usr/bin/env bash
# Builds the jukeboxd Debian package for a Raspberry Pi (arm64) or a PC (amd64):
#   scripts/package.sh arm64            # Raspberry Pi OS / Debian 13 "trixie", 64-bit
#   scripts/package.sh amd64 [DISTRO]   # DISTRO: trixie (the default) or bookworm
#   scripts/package.sh --version 0.1.1 arm64|amd64 [DISTRO]
# and prints the .deb's path as its last line. arm64 is cross-built with Debian's own Swift
# (scripts/cross-build.sh); amd64 is built with this machine's Swift toolchain. The package's
# Depends come from dpkg-shlibdeps, run in a root of that distribution (with the package's
# architecture added to it), so they name that distribution's libraries; lintian checks the
# result. Needs root (or sudo): debootstrap and chroot.
#
# The version is the source's (Sources/JukeboxProtocol/Version.swift), which the changelog's
# first entry must equal. --version numbers the package and the programs above it without an
# edit to the source (the build is given JUKEBOX_VERSION; see Package.swift), with a changelog
# entry that says so: for an upgrade's test, or a snapshot between releases.
#
# The package installs /usr/bin/jukeboxd and /usr/bin/jukebox (stripped, Swift runtime linked
# in); the systemd unit, enabled and started; /etc/jukeboxd/session.json (a conffile) that
# plays the demo clips in /usr/share/jukeboxd/clips; and the system user "jukeboxd", in
# "audio", whose group may use the control socket. State and added clips live in
# /var/lib/jukeboxd: remove keeps them, purge removes them.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/package.sh [--prepare | --build-only | --version VERSION] arm64|amd64 [trixie|bookworm]" >&2; exit 64; }
# --prepare only makes the root that Depends are found in (below), and --build-only only builds
# the programs, so that CI can do either while other steps run.
prepare=
build_only=
[ "${1:-}" = --prepare ] && { prepare=yes; shift; }
[ "${1:-}" = --build-only ] && { build_only=yes; shift; }
build_version=
if [ "${1:-}" = --version ]; then build_version=${2:-}; shift 2 || usage; fi
arch=${1:-}
distro=${2:-trixie}
case "$arch" in arm64 | amd64) ;; *) usage ;; esac
case "$distro" in trixie | bookworm) ;; *) usage ;; esac
if [ "$arch" = arm64 ] && [ "$distro" = bookworm ]; then
    echo "package: no arm64 package for bookworm: Debian's aarch64 Swift runtime needs glibc 2.38, and bookworm has 2.36; Raspberry Pi OS trixie (Debian 13) has it" >&2
    exit 69
fi
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
. scripts/cross-common.sh
scripts/install-deps.sh debootstrap dpkg-dev lintian binutils-aarch64-linux-gnu qemu-user-static >&2

# The root that the package's Depends are found in: one of the distribution, of this
# machine's architecture, with the package's architecture added (multiarch) when it is
# another, and dpkg-shlibdeps. The libraries' symbols files are the same either way, and
# nothing is emulated to read them. Made once; prints its folder.
shlibs_root() {
    local host_arch dir base libraries binutils
    host_arch=$(dpkg --print-architecture)
    dir="$work/roots/$distro-$arch-shlibs"
    libraries="libasound2-dev:$arch libsndfile1-dev:$arch libsoxr-dev:$arch libebur128-dev:$arch libical-dev:$arch libavahi-client-dev:$arch zlib1g-dev:$arch libstdc++6:$arch libgcc-s1:$arch"
    # Made again when the libraries change (.complete names them).
    if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$libraries" ]; then
        base=$(target_root "$distro" "$host_arch")
        copy_root "$base" "$dir"
        if [ "$arch" = "$host_arch" ]; then
            (in_target "$dir" "apt-get update -qq && apt-get install -y -qq dpkg-dev binutils $libraries") >&2
        else
            # The package's architecture's objdump, which dpkg-shlibdeps runs for its binaries.
            binutils=binutils-$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null | tr _ -)
            (in_target "$dir" "dpkg --add-architecture $arch && apt-get update -qq && apt-get install -y -qq dpkg-dev $binutils $libraries") >&2
        fi
        # Mounted by a subshell (in_target), so unmounted here.
        unmount_inside "$dir"
        echo "$libraries" > "$dir/.complete"
    fi
    echo "$dir"
}
if [ -n "$prepare" ]; then
    started=$SECONDS
    dir=$(shlibs_root)
    echo "package: $dir is ready ($((SECONDS - started)) s)"
    exit 0
fi

version=$(scripts/release-check.sh)
source_version=$version
if [ -n "$build_version" ]; then
    [[ "$build_version" =~ ^[0-9][0-9A-Za-z.+~-]{0,63}$ ]] || { echo "package: --version $build_version is not a version: digits, letters, . + ~ and -, starting with a digit" >&2; exit 64; }
    dpkg --compare-versions "$build_version" gt "$version" || { echo "package: --version $build_version is not above the source's version, $version" >&2; exit 64; }
    version=$build_version
fi

# 1. The two programs, and what runs them here (qemu-user for arm64).
if [ "$arch" = arm64 ]; then
    JUKEBOX_VERSION=$build_version scripts/cross-build.sh >&2
    bin="$work/aarch64"
    strip=aarch64-linux-gnu-strip
    register_aarch64
    run="qemu-aarch64-static -L $root$sysroot"
else
    # In a folder of its own, so that it may run beside the tests' build in .build.
    JUKEBOX_VERSION=$build_version swift build -c release --static-swift-stdlib --scratch-path "$work/amd64" >&2
    bin="$work/amd64/release"
    strip=strip
    run=
fi
for program in jukeboxd jukebox; do
    said=$($run "$bin/$program" --version)
    [ "$said" = "$version" ] || { echo "package: $bin/$program --version says \"$said\", not $version" >&2; exit 70; }
done
[ -n "$build_only" ] && { echo "package: $bin/jukeboxd and $bin/jukebox are jukeboxd $version for $arch" >&2; exit 0; }

# 2. The package's files.
out="$work/package/$distro-$arch"
stage="$out/jukeboxd_${version}_$arch"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
for program in jukeboxd jukebox; do
    install -D -m 0755 "$bin/$program" "$stage/usr/bin/$program"
    # As dh_strip does: symbols only a debugger needs go.
    $strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/usr/bin/$program"
done
install -D -m 0644 dist/jukeboxd.service "$stage/usr/lib/systemd/system/jukeboxd.service"
install -D -m 0644 packaging/session.json "$stage/etc/jukeboxd/session.json"
install -d "$stage/usr/share/jukeboxd/clips"
install -m 0644 clips/*.wav "$stage/usr/share/jukeboxd/clips/"
doc="$stage/usr/share/doc/jukeboxd"
install -D -m 0644 packaging/deb/copyright "$doc/copyright"
if [ "$version" = "$source_version" ]; then
    gzip -9n < packaging/deb/changelog > "$doc/changelog.gz"
else
    { printf 'jukeboxd (%s) unstable; urgency=medium\n\n  * Built from the source of %s, numbered %s by the build\n    (scripts/package.sh --version).\n\n -- jukeboxd authors <jukeboxd@example.org>  %s\n\n' \
        "$version" "$source_version" "$version" "$(date -R -u)"; cat packaging/deb/changelog; } | gzip -9n > "$doc/changelog.gz"
fi
for file in README.md docs/*.md; do gzip -9n < "$file" > "$doc/$(basename "$file").gz"; done
# Manual pages, from each program's own help (ArgumentParser's generate-manual, a debug build
# for this machine beside the tests', as it only prints; it runs an arm64 program through
# qemu-user).
env -u JUKEBOX_VERSION swift build --product generate-manual >&2
released=$(date -u -d "$(dpkg-parsechangelog -l packaging/deb/changelog -S Date)" +%F)
install -d "$stage/usr/share/man/man1" "$out/man"
for program in jukeboxd jukebox; do
    QEMU_LD_PREFIX="$root$sysroot" .build/debug/generate-manual "$bin/$program" --date "$released" -o "$out/man" >&2
    gzip -9n < "$out/man/$program.1" > "$stage/usr/share/man/man1/$program.1.gz"
done
install -D -m 0644 packaging/deb/lintian-overrides "$stage/usr/share/lintian/overrides/jukeboxd"
chmod 0644 "$doc"/*
install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$stage/DEBIAN/"
echo /etc/jukeboxd/session.json > "$stage/DEBIAN/conffiles"

# 3. Depends, from the libraries the daemon loads, as the distribution's packages provide
#    them (dpkg-shlibdeps in the root above).
shlibs_root=$(shlibs_root)
# Mounted here, not in the command substitution below, so that this shell unmounts it.
mount_once proc "$shlibs_root/proc" -t proc
rm -rf "$shlibs_root/tmp/shlibs"
mkdir -p "$shlibs_root/tmp/shlibs/debian"
printf 'Source: jukeboxd\n\nPackage: jukeboxd\nArchitecture: any\n' > "$shlibs_root/tmp/shlibs/debian/control"
cp "$stage/usr/bin/jukeboxd" "$stage/usr/bin/jukebox" "$shlibs_root/tmp/shlibs/"
depends=$(in_target "$shlibs_root" "cd /tmp/shlibs && DEB_HOST_ARCH=$arch dpkg-shlibdeps -O jukeboxd jukebox 2>/dev/null" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package: dpkg-shlibdeps found no libraries for jukeboxd" >&2; exit 70; }

cat > "$stage/DEBIAN/control" <<CONTROL
Package: jukeboxd
Version: $version
Architecture: $arch
Maintainer: jukeboxd authors <jukeboxd@example.org>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends, adduser
Recommends: alsa-utils, avahi-daemon, espeak-ng, ffmpeg
Section: sound
Priority: optional
Description: headless audio clip jukebox
 jukeboxd plays short recorded clips (reminders, affirmations, announcements,
 chimes) at random moments, shuffled so none repeats before the others have
 played, within time windows, one at a time and never on top of each other.
 It runs unattended as a system service and is driven by the jukebox command,
 an HTTP API with a phone page, and MQTT with Home Assistant discovery. It plays
 through ALSA, or Snapcast for several rooms.
CONTROL
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"

deb="$out/jukeboxd_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
lintian --fail-on error --info "$deb" >&2
echo "package: $(du -h "$deb" | cut -f1) package; installed, jukeboxd is $(du -h "$stage/usr/bin/jukeboxd" | cut -f1) and jukebox $(du -h "$stage/usr/bin/jukebox" | cut -f1); Depends: $depends, adduser" >&2
echo "$deb"
