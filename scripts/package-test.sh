#!/usr/bin/env bash
# Installs a package that scripts/package.sh made into a fresh Debian root of its distribution
# and architecture as a Pi or a PC installs it from the repository: the package published as a
# release publishes it (scripts/apt-publish.sh), signed with a key of the test's own and served
# on loopback; then the README's install lines, as written but for the address (fetch the
# keyring package, dpkg -i, apt update, apt install jukeboxd). It checks what a user relies on:
#   - apt refuses the repository when one byte of an index is changed, or when another key
#     signed it;
#   - the jukeboxd user (in audio), its folders, and the unit enabled for boot;
#   - `systemd-analyze verify` of the installed unit;
#   - the packaged session passes `jukeboxd --check`, run as the service's user;
#   - the daemon plays a pick into ALSA's `file` plugin and answers `jukebox status` from a
#     member of the jukeboxd group;
#   - remove keeps the session and the state; purge removes both.
# A package of this machine's architecture (amd64 here) is installed in a root booted with its
# own systemd (boot_root in scripts/cross-common.sh): apt's scripts start the service, which
# must be active. With --upgrade-to NEWER (a package numbered above, scripts/package.sh
# --version), NEWER is then added to the same repository and `apt upgrade` run over a service
# with an edited session, an added clip, a paused queue and the web remote's certificate
# authority: all are kept, the service restarts once, as the newer version, and plays the
# queue it had. A package of another architecture (arm64) runs under qemu-user, without
# systemd: the daemon is started as the unit starts it.
#   scripts/package-test.sh [--upgrade-to NEWER_DEB] DEB [DISTRO]   # trixie (the default) or bookworm
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
usage="usage: scripts/package-test.sh [--upgrade-to NEWER_DEB] DEB [DISTRO]"
newer=
if [ "${1:-}" = --upgrade-to ]; then newer=$(realpath "${2:?$usage}"); shift 2; fi
deb=$(realpath "${1:?$usage}")
distro=${2:-trixie}
arch=$(dpkg-deb -f "$deb" Architecture)
[ "$arch" = arm64 ] && register_aarch64
native=
[ "$arch" = "$(dpkg --print-architecture)" ] && native=yes
if [ -n "$newer" ]; then
    [ -n "$native" ] || { echo "package-test: --upgrade-to needs a package of this machine's architecture, which the test boots with systemd" >&2; exit 64; }
    dpkg --compare-versions "$(dpkg-deb -f "$newer" Version)" gt "$(dpkg-deb -f "$deb" Version)" \
        || { echo "package-test: $newer is not numbered above $deb" >&2; exit 64; }
fi
started=$(date +%s)

base=$(target_root "$distro" "$arch")
test_root="$work/roots/$distro-$arch-install"
copy_root "$base" "$test_root"
daemon=
server=
apt_work=$(mktemp -d)
finish() {
    [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null || true
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    halt_root
    rm -rf "$apt_work"
    unmount_all
}
trap finish EXIT
fail() {
    echo "package-test: $*" >&2
    [ -f "$test_root/tmp/jukeboxd.log" ] && { echo "the daemon's log:" >&2; cat "$test_root/tmp/jukeboxd.log" >&2; }
    [ -n "$booted" ] && { echo "the service's journal:" >&2; in_booted "journalctl -u jukeboxd -o short-monotonic --no-pager" >&2 || true; }
    exit 1
}
if [ -n "$native" ]; then
    boot_root "$test_root"
    inside() { in_booted "$1"; }
else
    # Mounted by this shell (not by a pipeline's subshell), so that its exit unmounts it.
    mount_once proc "$test_root/proc" -t proc
    inside() { in_target "$test_root" "$1"; }
fi
# What the test hands the root: not in /tmp, which a booted trixie mounts a tmpfs over.
handed="$test_root/srv/package-test"
mkdir -p "$handed"

# The repository as a release publishes it (scripts/apt-publish.sh, as the release workflow
# runs it), signed with a key of this test's own (never the project's), served on loopback,
# which the root shares; and the release's downloads with their SHA256SUMS.
export GNUPGHOME="$apt_work/gnupg"
install -d -m 0700 "$GNUPGHOME"
repo="$apt_work/repo"
mkdir -p "$repo"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$repo" "$port" >"$apt_work/server.log" 2>&1 &
server=$!
url="http://127.0.0.1:$port/apt"
scripts/apt-publish.sh --new-key --assets "$apt_work/assets" "$repo/apt" "$url" "$deb" >/dev/null 2>"$apt_work/repo.log" \
    || { cat "$apt_work/repo.log" >&2; fail "apt-publish.sh failed"; }
(cd "$apt_work/assets" && sha256sum --check --quiet SHA256SUMS && [ "$(wc -l < SHA256SUMS)" = 2 ] \
    && grep -q " $(basename "$deb" .deb)_$distro.deb\$" SHA256SUMS) \
    || fail "the release's SHA256SUMS does not hold for the package (named for $distro) and the keyring package: $(cat "$apt_work/assets/SHA256SUMS")"
repo="$repo/apt"

# Installing as the README says, word for word but for the address: its lines, as a user types
# them (answering apt's question with Y), from the root's home.
published=$(head -n 1 packaging/apt-url)
install_lines=$(awk '/<!-- the install: scripts\/package-test.sh runs these lines -->/ { found = 1; next }
    found && /^```sh$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' README.md)
echo "$install_lines" | grep -qF "$published/jukeboxd-archive-keyring.deb" \
    || fail "the README's install does not fetch $published/jukeboxd-archive-keyring.deb (packaging/apt-url): $install_lines"
printf '%s\n' "${install_lines//"$published"/"$url"}" > "$handed/install.sh"
inside "cd /root && yes | sh -e /srv/package-test/install.sh" >"$apt_work/install.log" 2>&1 \
    || { cat "$apt_work/install.log" >&2; fail "the README's install failed"; }
grep -qx "Suites: $distro" "$test_root/etc/apt/sources.list.d/jukeboxd.sources" \
    || fail "the keyring package's source is not for $distro: $(cat "$test_root/etc/apt/sources.list.d/jukeboxd.sources")"
grep -E '^(W|E|Err|Ign):' "$apt_work/install.log" | grep -q '127\.0\.0\.1' && { cat "$apt_work/install.log" >&2; fail "apt update warned about the repository"; }
[ "$(inside "dpkg-query -W -f '\${Status}' jukeboxd")" = "install ok installed" ] || { cat "$apt_work/install.log" >&2; fail "the README's install did not install jukeboxd"; }

# A signature that does not hold is refused: each time from apt's lists emptied of the
# repository, so that apt fetches everything again, and with the repository as apt's only
# source, so that it does not read Debian's indexes again (slow under emulation).
mkdir -p "$handed/jukeboxd-only"
cp "$test_root/etc/apt/sources.list.d/jukeboxd.sources" "$handed/jukeboxd-only/"
refused() {  # WHAT: apt update must fail on the repository as it is now
    rm -f "$test_root"/var/lib/apt/lists/127.0.0.1*
    if inside "apt-get update -qq -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/srv/package-test/jukeboxd-only -o APT::Get::List-Cleanup=0" \
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
# As docs/raspberry-pi.md runs it (`sudo -u jukeboxd jukeboxd --check …`): as the service's
# user, with that user's HOME, as sudo sets it, so the state folder checked is one it may make.
as_service="setpriv --reuid=jukeboxd --regid=jukeboxd --init-groups env HOME=/var/lib/jukeboxd"
inside "$as_service jukeboxd --check /etc/jukeboxd/session.json --device null" || fail "the packaged session fails --check"
# The root has no sound card, so the session's own device is not there: --check says so (69).
set +e
checked=$(inside "$as_service jukeboxd --check /etc/jukeboxd/session.json" 2>&1)
status=$?
set -e
[ "$status" = 69 ] && echo "$checked" | grep -q 'device: audio device "default" is not there' \
    || fail "--check of the packaged session on a root without a sound card did not say its device is missing (exit $status): $checked"

if [ -n "$native" ]; then
    # Booted: apt's scripts started the service as a Pi's systemd runs it, on the packaged
    # session, whose device is not there here: it says so and runs on.
    journal() { inside "journalctl -u jukeboxd -o cat --no-pager"; }
    # The daemon's first line at each start, which names its version.
    starts() { journal | grep '^jukeboxd [0-9][^,]*, session ' || true; }
    # What an upgrade must keep: the added clips, and the web remote's certificate authority.
    clip_sums() { (cd "$test_root/var/lib/jukeboxd/clips" && sha256sum -- *); }
    authority_sums() { (cd "$test_root/var/lib/jukeboxd" && find . -path './state.tls/*' -type f -print0 | sort -z | xargs -0 -r sha256sum); }
    wait_until() {  # WHAT COMMAND…: up to 60 s
        local what=$1; shift
        for _ in $(seq 1 600); do "$@" && return 0; sleep 0.1; done
        fail "$what"
    }
    active() { [ "$(inside "systemctl is-active jukeboxd" || true)" = active ]; }
    [ "$(inside "systemctl is-enabled jukeboxd" || true)" = enabled ] || fail "systemd does not say the service is enabled after apt install"
    wait_until "the service is not active after apt install: $(inside "systemctl status jukeboxd --no-pager" || true)" active
    inside "useradd -m -G jukeboxd pi"
    as_pi() { inside "runuser -u pi -- jukebox $1"; }
    listening() { journal | grep -q "control socket listening"; }
    wait_until "the service never said its control socket is listening" listening
    status=$(as_pi "status --json") || fail "jukebox status from a member of the jukeboxd group failed: $status"
    echo "$status" | grep -q "\"version\":\"$(dpkg-deb -f "$deb" Version)\"" || fail "jukebox status does not give the package's version: $status"
    journal | grep -q 'audio device "default" is not there' || fail "the service did not say its device is not there"

    # Edited as a user does: the session's device (ALSA's file plugin, in the state folder, as
    # the unit lets the daemon write there) and the web remote turned on (its certificate
    # authority is made at the start); then restarted to take the web remote.
    heard=/var/lib/jukeboxd/heard.raw
    inside "sed -i 's|\"device\": \"default\",|\"device\": \"file:FILE=$heard,FORMAT=raw\", \"http\": { \"listen\": \"127.0.0.1:0\" },|' /etc/jukeboxd/session.json"
    grep -q "FILE=$heard" "$test_root/etc/jukeboxd/session.json" || fail "the session's device could not be edited: $(head -5 "$test_root/etc/jukeboxd/session.json")"
    inside "systemctl restart jukeboxd"
    # systemctl restart returns once the daemon said it is ready (Type=notify).
    web() { journal | grep -q "web remote"; }
    wait_until "the service did not start the web remote after the session was edited" web
    cp clips/walk.wav "$handed/extra.wav"
    chmod 0644 "$handed/extra.wav"
    as_pi pause >/dev/null
    as_pi "add /srv/package-test/extra.wav --id extra" >/dev/null || fail "jukebox add failed"
    for clip in water extra breathe; do as_pi "play $clip" >/dev/null || fail "jukebox play $clip failed"; done
    queue_before=$(as_pi queue)
    ca=$(authority_sums)
    [ -n "$ca" ] || fail "no certificate authority in /var/lib/jukeboxd/state.tls: $(ls -la "$test_root/var/lib/jukeboxd")"
    session_before=$(sha256sum < "$test_root/etc/jukeboxd/session.json")
    [ -s "$test_root/var/lib/jukeboxd/clips/extra.wav" ] || fail "jukebox add stored no extra.wav in /var/lib/jukeboxd/clips: $(ls "$test_root/var/lib/jukeboxd/clips")"
    clips_before=$(clip_sums)
    before=$(starts | wc -l)
    pid_before=$(inside "systemctl show -P MainPID jukeboxd")

    if [ -n "$newer" ]; then
        # The newer package, into the same repository; then apt upgrade, as unattended: apt
        # must keep the edited session (a conffile the package did not change) without asking.
        newer_version=$(dpkg-deb -f "$newer" Version)
        scripts/apt-publish.sh "$repo" "$url" "$newer" >/dev/null 2>>"$apt_work/repo.log" || { cat "$apt_work/repo.log" >&2; fail "apt-publish.sh could not add $newer"; }
        inside "apt-get update -qq && apt-get upgrade -y -qq" </dev/null >"$apt_work/upgrade.log" 2>&1 || { cat "$apt_work/upgrade.log" >&2; fail "apt upgrade failed"; }
        [ "$(inside "dpkg-query -W -f '\${Version}' jukeboxd")" = "$newer_version" ] || fail "apt upgrade did not install $newer_version: $(cat "$apt_work/upgrade.log")"
        [ -e "$repo/pool/$distro/main/j/jukeboxd/$(basename "$deb")" ] || fail "the repository no longer has the earlier package, $(basename "$deb")"
        # apt's restart returns once the new daemon said it is ready (Type=notify).
        wait_until "the service is not active after the upgrade" active
        after=$(starts | wc -l)
        [ "$after" = $((before + 1)) ] || fail "the service started $((after - before)) times during the upgrade, not once"
        starts | tail -n 1 | grep -q "^jukeboxd $newer_version," || fail "the service started after the upgrade is not $newer_version"
        [ "$(inside "systemctl show -P NRestarts jukeboxd")" = 0 ] || fail "the service was restarted after a failure during the upgrade"
        [ "$(inside "systemctl show -P MainPID jukeboxd")" != "$pid_before" ] || fail "the service was not restarted by the upgrade"
        [ "$(inside "jukebox --version")" = "$newer_version" ] || fail "jukebox --version does not say $newer_version after the upgrade"
        as_pi "status --json" | grep -q "\"version\":\"$newer_version\"" || fail "jukebox status does not give $newer_version after the upgrade"
        [ "$(sha256sum < "$test_root/etc/jukeboxd/session.json")" = "$session_before" ] || fail "the upgrade changed the edited session: $(cat "$test_root/etc/jukeboxd/session.json")"
        [ ! -e "$test_root/etc/jukeboxd/session.json.dpkg-new" ] && [ ! -e "$test_root/etc/jukeboxd/session.json.dpkg-old" ] || fail "the upgrade left a .dpkg-new or .dpkg-old beside the session"
        [ "$(clip_sums)" = "$clips_before" ] || fail "the upgrade changed the added clips"
        [ "$(authority_sums)" = "$ca" ] || fail "the upgrade changed the web remote's certificate authority"
        upgraded=" and upgraded to $newer_version (a restart, the session, the clip, the queue and the certificate authority kept)"
    fi
    # The queue it had (paused, as it was left), played in its order once resumed.
    as_pi "status --json" | grep -q '"paused":true' || fail "the service is not paused as it was left: $(as_pi status)"
    [ "$(as_pi queue)" = "$queue_before" ] || fail "the queue is not the one it had: $(as_pi queue), not $queue_before"
    mark=$(journal | wc -l)
    as_pi resume >/dev/null
    played_all() { [ "$(journal | tail -n +"$((mark + 1))" | sed -n 's/^played \([a-z]*\) .*/\1/p' | head -n 3 | tr '\n' ' ')" = "water extra breathe " ]; }
    wait_until "the queue was not played in its order: $(journal | tail -n +"$((mark + 1))")" played_all
    [ -s "$test_root$heard" ] || fail "nothing reached ALSA's file plugin"
    played=$(wc -c < "$test_root$heard")
    # The music bed under the unit, as docs/music.md sets it up: jukeboxd makes the FIFO for
    # "audio" (mode 0660, in /run/jukeboxd, 0755), and MPD's user (a system user in "audio",
    # as Debian's mpd package makes it) writes music into it.
    inside "id -u mpd >/dev/null 2>&1 || useradd --system --no-create-home --groups audio mpd"
    inside "sed -i 's|\"http\": {|\"bed\": { \"pipe\": \"/run/jukeboxd/bed\", \"group\": \"audio\" }, \"http\": {|' /etc/jukeboxd/session.json"
    grep -q '"group": "audio"' "$test_root/etc/jukeboxd/session.json" || fail "the session's bed could not be added"
    inside "systemctl restart jukeboxd"
    fifo_shared() { [ "$(inside "stat -c '%F %G %a' /run/jukeboxd/bed" 2>/dev/null)" = "fifo audio 660" ]; }
    wait_until "the bed's FIFO is not audio's, 0660: $(inside "ls -la /run/jukeboxd" || true)" fifo_shared
    # Two seconds of CD audio (silence counts: the bed says music is playing while any comes in).
    inside "timeout 20 runuser -u mpd -- sh -c 'head -c 352800 /dev/zero > /run/jukeboxd/bed'" \
        || fail "MPD's user could not write the bed's FIFO: $(inside "ls -la /run/jukeboxd" || true)"
    bed=$(as_pi bed) || fail "jukebox bed failed: $bed"
    echo "$bed" | grep -q "music playing" || fail "the bed did not hear MPD's user: $bed"
    # Swift's Dispatch asks a nice of -4 for its most urgent threads, and logs to the journal
    # when it may not: the unit allows it (LimitNICE=-4). systemd applies that where it may
    # raise the limit, which it may not in a sandbox without CAP_SYS_RESOURCE.
    [ "$(inside "systemctl show -P LimitNICE jukeboxd")" = 24 ] || fail "the unit does not allow the nice of -4 that Dispatch asks (LimitNICE)"
    if inside "grep -q '^Max nice priority *24 *24' /proc/\$(systemctl show -P MainPID jukeboxd)/limits"; then
        journal | grep -q 'Failed to set thread priority' && fail "the service's journal has Dispatch's complaint that it may not set a thread's priority"
    else
        echo "package-test: not checked: Dispatch's complaint in the journal (systemd could not apply LimitNICE: this machine lets no one raise the hard limit of nice, $(prlimit --nice --noheadings --output HARD | tr -d " "))" >&2
    fi
else
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
fi

# Remove keeps the user's session and state; purge takes them.
inside "apt-get remove -y -qq jukeboxd" >/dev/null
[ ! -e "$test_root/usr/bin/jukeboxd" ] || fail "remove left /usr/bin/jukeboxd"
[ -s "$test_root/etc/jukeboxd/session.json" ] && [ -s "$test_root/var/lib/jukeboxd/state.json" ] || fail "remove did not keep the session and the state"
inside "apt-get purge -y -qq jukeboxd" >/dev/null
[ ! -e "$test_root/etc/jukeboxd" ] && [ ! -e "$test_root/var/lib/jukeboxd" ] || fail "purge left /etc/jukeboxd or /var/lib/jukeboxd"
inside "dpkg-statoverride --list /etc/jukeboxd" >/dev/null && fail "purge left the statoverride of /etc/jukeboxd"
[ ! -e "$test_root/etc/systemd/system/multi-user.target.wants/jukeboxd.service" ] || fail "purge left the unit enabled"

echo "package-test: $(basename "$deb") installed from a signed repository in a $distro $arch root$( [ -n "$native" ] && echo " booted with systemd") (which refused it tampered with and signed with another key): checked, played $played bytes, answered jukebox status, verified${upgraded:-}, removed and purged ($(( $(date +%s) - started )) s)"
