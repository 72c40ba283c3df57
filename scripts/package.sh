#!/usr/bin/env bash
# Builds the jukeboxd Debian package for a Raspberry Pi (arm64) or a PC (amd64):
#   scripts/package.sh arm64            # Raspberry Pi OS / Debian 13 "trixie", 64-bit
#   scripts/package.sh amd64 [DISTRO]   # DISTRO: trixie (the default) or bookworm
# and prints the .deb's path as its last line. arm64 is cross-built with Debian's own Swift
# (scripts/cross-build.sh); amd64 is built with this machine's Swift toolchain. The package's
# Depends come from dpkg-shlibdeps, run in a root of that distribution (with the package's
# architecture added to it), so they name that distribution's libraries; lintian checks the
# result. Needs root (or sudo): debootstrap and chroot.
#
# The package installs /usr/bin/jukeboxd and /usr/bin/jukebox (stripped, Swift runtime linked
# in); the systemd unit, enabled and started; /etc/jukeboxd/session.json (a conffile) that
# plays the demo clips in /usr/share/jukeboxd/clips; and the system user "jukeboxd", in
# "audio", whose group may use the control socket. State and added clips live in
# /var/lib/jukeboxd: remove keeps them, purge removes them.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/package.sh [--prepare] arm64|amd64 [trixie|bookworm]" >&2; exit 64; }
# --prepare only makes the root that Depends are found in (below), so that CI can make it while
# other steps run.
prepare=
[ "${1:-}" = --prepare ] && { prepare=yes; shift; }
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
    if [ ! -e "$dir/.complete" ]; then
        base=$(target_root "$distro" "$host_arch")
        copy_root "$base" "$dir"
        libraries="libasound2-dev:$arch libsndfile1-dev:$arch libsoxr-dev:$arch libebur128-dev:$arch libstdc++6:$arch libgcc-s1:$arch"
        if [ "$arch" = "$host_arch" ]; then
            (in_target "$dir" "apt-get update -qq && apt-get install -y -qq dpkg-dev binutils $libraries") >&2
        else
            # The package's architecture's objdump, which dpkg-shlibdeps runs for its binaries.
            binutils=binutils-$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null | tr _ -)
            (in_target "$dir" "dpkg --add-architecture $arch && apt-get update -qq && apt-get install -y -qq dpkg-dev $binutils $libraries") >&2
        fi
        # Mounted by a subshell (in_target), so unmounted here.
        unmount_inside "$dir"
        touch "$dir/.complete"
    fi
    echo "$dir"
}
if [ -n "$prepare" ]; then
    started=$SECONDS
    dir=$(shlibs_root)
    echo "package: $dir is ready ($((SECONDS - started)) s)"
    exit 0
fi

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/JukeboxProtocol/Version.swift)
changelog_version=$(sed -n '1s/^jukeboxd (\([^)]*\)).*/\1/p' packaging/deb/changelog)
[ "$version" = "$changelog_version" ] || { echo "package: Version.swift says $version, packaging/deb/changelog's first entry $changelog_version; add a changelog entry" >&2; exit 65; }

# 1. The two programs, and what runs them here (qemu-user for arm64).
if [ "$arch" = arm64 ]; then
    scripts/cross-build.sh >&2
    bin="$work/aarch64"
    strip=aarch64-linux-gnu-strip
    register_aarch64
    run="qemu-aarch64-static -L $root$sysroot"
else
    swift build -c release --static-swift-stdlib >&2
    bin=.build/release
    strip=strip
    run=
fi
for program in jukeboxd jukebox; do
    said=$($run "$bin/$program" --version)
    [ "$said" = "$version" ] || { echo "package: $bin/$program --version says \"$said\", not $version" >&2; exit 70; }
done

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
gzip -9n < packaging/deb/changelog > "$doc/changelog.gz"
for file in README.md docs/*.md; do gzip -9n < "$file" > "$doc/$(basename "$file").gz"; done
# Manual pages, from each program's own help (ArgumentParser's generate-manual, a debug build
# for this machine beside the tests', as it only prints; it runs an arm64 program through
# qemu-user).
swift build --product generate-manual >&2
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
Recommends: alsa-utils, espeak-ng, ffmpeg
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
