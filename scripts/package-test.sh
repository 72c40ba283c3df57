#!/usr/bin/env bash
# Installs a package that scripts/package.sh made into a fresh Debian root of its distribution
# and architecture (arm64 runs under qemu-user) as a Pi installs it from the repository: the
# package and the keyring package in a repository signed with a key of the test's own
# (scripts/apt-repo.sh, scripts/keyring-package.sh), served on loopback; the keyring package
# installed, then `apt update` and `apt install jukeboxd`. It checks what a user relies on:
#   - apt refuses the repository when one byte of an index is changed, or when another key
#     signed it;
#   - the jukeboxd user (in audio), its folders, and the unit enabled for boot;
#   - `systemd-analyze verify` of the installed unit;
#   - the packaged session passes `jukeboxd --check`, run as the service's user;
#   - the daemon, started as the unit starts it, plays a pick into ALSA's `file` plugin and
#     answers `jukebox status` from a member of the jukeboxd group;
#   - remove keeps the session and the state; purge removes both.
#   scripts/package-test.sh DEB [DISTRO]     # DISTRO: trixie (the default) or bookworm
#   scripts/package-test.sh --prepare DISTRO ARCH
# --prepare only makes the fresh root that a later run copies (debootstrap; for arm64, its
# second stage under qemu-user), so that CI can make it while other steps run.
# Needs root (or sudo) for the chroot.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo "$0" "$@"; fi
. scripts/cross-common.sh
if [ "${1:-}" = --prepare ]; then
    started=$SECONDS
    base=$(target_root "${2:?usage: scripts/package-test.sh --prepare DISTRO ARCH}" "${3:?usage: scripts/package-test.sh --prepare DISTRO ARCH}")
    echo "package-test: $base is ready ($((SECONDS - started)) s)"
    exit 0
fi
deb=$(realpath "${1:?usage: scripts/package-test.sh DEB [DISTRO]}")
distro=${2:-trixie}
arch=$(dpkg-deb -f "$deb" Architecture)
[ "$arch" = arm64 ] && register_aarch64
started=$(date +%s)

base=$(target_root "$distro" "$arch")
test_root="$work/roots/$distro-$arch-install"
copy_root "$base" "$test_root"
# Mounted by this shell (not by a pipeline's subshell), so that its exit unmounts it.
mount_once proc "$test_root/proc" -t proc
daemon=
server=
apt_work=$(mktemp -d)
finish() {
    [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null || true
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$apt_work"
    unmount_all
}
trap finish EXIT
fail() {
    echo "package-test: $*" >&2
    [ -f "$test_root/tmp/jukeboxd.log" ] && { echo "the daemon's log:" >&2; cat "$test_root/tmp/jukeboxd.log" >&2; }
    exit 1
}
inside() { in_target "$test_root" "$1"; }

# The repository: a key of this test's own (never the project's), the package and the keyring
# package, served on loopback, which the root shares.
export GNUPGHOME="$apt_work/gnupg"
install -d -m 0700 "$GNUPGHOME"
repo="$apt_work/repo"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$repo" "$port" >"$apt_work/server.log" 2>&1 &
server=$!
keyring=$(scripts/apt-repo.sh --new-key "$repo" "$deb" 2>"$apt_work/repo.log" | tail -n 1) || { cat "$apt_work/repo.log" >&2; fail "apt-repo.sh failed"; }
keyring_deb=$(scripts/keyring-package.sh "$keyring" "$apt_work" "http://127.0.0.1:$port" 2>>"$apt_work/repo.log" | tail -n 1)
scripts/apt-repo.sh "$repo" "$keyring_deb" >/dev/null 2>>"$apt_work/repo.log"

# Installing as a Pi does: the keyring package (it depends on nothing: dpkg installs it, where
# apt would first read Debian's indexes, a minute under emulation), then apt update and apt
# install; apt resolves the Depends from Debian's archive.
cp "$keyring_deb" "$test_root/tmp/"
inside "dpkg -i /tmp/$(basename "$keyring_deb")" >/dev/null
grep -qx "Suites: $distro" "$test_root/etc/apt/sources.list.d/jukeboxd.sources" \
    || fail "the keyring package's source is not for $distro: $(cat "$test_root/etc/apt/sources.list.d/jukeboxd.sources")"
inside "apt-get update -qq" >"$apt_work/update.log" 2>&1 || { cat "$apt_work/update.log" >&2; fail "apt update refused the repository"; }
grep -q '127.0.0.1' "$apt_work/update.log" && { cat "$apt_work/update.log" >&2; fail "apt update warned about the repository"; }
inside "apt-get install -y -qq jukeboxd" >/dev/null

# A signature that does not hold is refused: each time from apt's lists emptied of the
# repository, so that apt fetches everything again, and with the repository as apt's only
# source, so that it does not read Debian's indexes again (slow under emulation).
mkdir -p "$test_root/tmp/jukeboxd-only"
cp "$test_root/etc/apt/sources.list.d/jukeboxd.sources" "$test_root/tmp/jukeboxd-only/"
refused() {  # WHAT: apt update must fail on the repository as it is now
    rm -f "$test_root"/var/lib/apt/lists/127.0.0.1*
    if inside "apt-get update -qq -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/tmp/jukeboxd-only -o APT::Get::List-Cleanup=0" \
        >"$apt_work/update.log" 2>&1; then
        fail "apt update took a repository $1"
    fi
    grep -q '127.0.0.1' "$apt_work/update.log" || fail "apt update failed, but not on the repository $1: $(cat "$apt_work/update.log")"
}
# One byte of the index changed, in each form apt may fetch (it tries the next on a mismatch).
lists="$repo/dists/$distro/main/binary-$arch"
cp "$lists/Packages" "$lists/Packages.gz" "$apt_work/"
for index in Packages Packages.gz; do printf '\x01' | dd of="$lists/$index" bs=1 seek=100 conv=notrunc status=none; done
refused "with one byte of Packages changed"
cp "$apt_work/Packages" "$apt_work/Packages.gz" "$lists/"
cp "$repo/dists/$distro/InRelease" "$repo/dists/$distro/Release.gpg" "$apt_work/"
install -d -m 0700 "$apt_work/other"
GNUPGHOME="$apt_work/other" gpg --batch --pinentry-mode loopback --passphrase '' --quick-generate-key "another key" ed25519 sign never 2>/dev/null
GNUPGHOME="$apt_work/other" gpg --batch --yes --clearsign --output "$repo/dists/$distro/InRelease" "$repo/dists/$distro/Release"
GNUPGHOME="$apt_work/other" gpg --batch --yes --armor --detach-sign --output "$repo/dists/$distro/Release.gpg" "$repo/dists/$distro/Release"
refused "signed with another key"
cp "$apt_work/InRelease" "$apt_work/Release.gpg" "$repo/dists/$distro/"
inside "id -nG jukeboxd" | tr ' ' '\n' | grep -qx audio || fail "the jukeboxd user is not in the audio group: $(inside "id jukeboxd")"
[ "$(inside "stat -c %U /var/lib/jukeboxd/clips /etc/jukeboxd" | sort -u)" = jukeboxd ] || fail "/var/lib/jukeboxd/clips and /etc/jukeboxd do not belong to jukeboxd"
[ -L "$test_root/etc/systemd/system/multi-user.target.wants/jukeboxd.service" ] || fail "the unit is not enabled for boot"
# The root has no man-db to look the unit's man: pages up with; they are checked as files.
inside "systemd-analyze verify --man=no /usr/lib/systemd/system/jukeboxd.service" || fail "systemd-analyze verify found problems in the unit"
for page in jukeboxd jukebox; do
    [ -s "$test_root/usr/share/man/man1/$page.1.gz" ] || fail "no manual page $page(1), which the unit names"
done
inside "setpriv --reuid=jukeboxd --regid=jukeboxd --init-groups jukeboxd --check /etc/jukeboxd/session.json --device null" || fail "the packaged session fails --check"
# The root has no sound card, so the session's own device is not there: --check says so (69).
set +e
checked=$(inside "setpriv --reuid=jukeboxd --regid=jukeboxd --init-groups jukeboxd --check /etc/jukeboxd/session.json" 2>&1)
status=$?
set -e
[ "$status" = 69 ] && echo "$checked" | grep -q 'device: audio device "default" is not there' \
    || fail "--check of the packaged session on a root without a sound card did not say its device is missing (exit $status): $checked"

# The daemon as the unit runs it (User=jukeboxd, RuntimeDirectory, StateDirectory), but with
# ALSA's file plugin for a device.
inside "install -d -o jukeboxd -g jukeboxd -m 0750 /run/jukeboxd && useradd -m -G jukeboxd pi"
chroot "$test_root" /usr/bin/env -i PATH=/usr/bin:/bin STATE_DIRECTORY=/var/lib/jukeboxd /bin/sh -c \
    "exec setpriv --reuid=jukeboxd --regid=jukeboxd --init-groups /usr/bin/jukeboxd /etc/jukeboxd/session.json \
        --socket /run/jukeboxd/jukeboxd.sock --socket-group jukeboxd --device file:FILE=/tmp/out.raw,FORMAT=raw --seed 1" \
    2>"$test_root/tmp/jukeboxd.log" &
daemon=$!
wait_for() {
    for _ in $(seq 1 600); do grep -q "$1" "$test_root/tmp/jukeboxd.log" && return 0; kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
    fail "the daemon never logged \"$1\""
}
wait_for "control socket listening"
status=$(inside "runuser -u pi -- jukebox status") || fail "jukebox status from a member of the jukeboxd group failed: $status"
echo "$status" | grep -q "jukeboxd" || fail "jukebox status does not name the session: $status"
inside "runuser -u pi -- jukebox pick" >/dev/null || fail "jukebox pick failed"
wait_for " played "
[ -s "$test_root/tmp/out.raw" ] || fail "nothing reached ALSA's file plugin"
[ -s "$test_root/var/lib/jukeboxd/state.json" ] || fail "no state in /var/lib/jukeboxd/state.json"
kill -TERM "$daemon"
wait "$daemon" || fail "jukeboxd exited with status $? after SIGTERM"
daemon=
played=$(wc -c < "$test_root/tmp/out.raw")

# Remove keeps the user's session and state; purge takes them.
inside "apt-get remove -y -qq jukeboxd" >/dev/null
[ ! -e "$test_root/usr/bin/jukeboxd" ] || fail "remove left /usr/bin/jukeboxd"
[ -s "$test_root/etc/jukeboxd/session.json" ] && [ -s "$test_root/var/lib/jukeboxd/state.json" ] || fail "remove did not keep the session and the state"
inside "apt-get purge -y -qq jukeboxd" >/dev/null
[ ! -e "$test_root/etc/jukeboxd" ] && [ ! -e "$test_root/var/lib/jukeboxd" ] || fail "purge left /etc/jukeboxd or /var/lib/jukeboxd"
inside "dpkg-statoverride --list /etc/jukeboxd" >/dev/null && fail "purge left the statoverride of /etc/jukeboxd"
[ ! -e "$test_root/etc/systemd/system/multi-user.target.wants/jukeboxd.service" ] || fail "purge left the unit enabled"

echo "package-test: $(basename "$deb") installed from a signed repository in a $distro $arch root (which refused it tampered with and signed with another key): checked, played $played bytes, answered jukebox status, verified, removed and purged ($(( $(date +%s) - started )) s)"
