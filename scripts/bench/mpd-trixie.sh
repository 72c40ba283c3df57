#!/usr/bin/env bash
# MPD as a Raspberry Pi OS trixie user runs it: trixie's own mpd package, in a trixie root
# (debootstrap, as scripts/package-test.sh makes them), with Debian's /etc/mpd.conf, its paths
# moved to a folder of the script's own and the paced rig's ALSA output (scripts/pulse-rig.sh,
# reached through its socket). Prints its idle RSS and, after playing a 10 s WAV, its RSS and
# private memory in MB, with this machine's own MPD measured the same way beside it.
# For BENCHMARKS.md; run as root (chroot). Needs debootstrap, mpd, mpc and sox on the host.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cross-common.sh
target_root trixie amd64 >/dev/null
copy=$work/roots/trixie-amd64-mpd
bench=/tmp/jukebox-mpd-trixie
copy_root "$work/roots/trixie-amd64" "$copy"
rm -rf "$bench"; mkdir -p "$bench/music"
cleanup() {
    pkill -f "mpd --no-daemon $bench" 2>/dev/null || true
    scripts/pulse-rig.sh stop "$bench/pulse" 2>/dev/null || true
    unmount_all
    remove_root "$copy" || true
    rm -rf "$bench"
}
trap cleanup EXIT
in_target "$copy" 'apt-get update -qq && apt-get install -y -qq --no-install-recommends mpd mpc libasound2-plugins >/dev/null'
mount_once "$bench" "$copy$bench" --bind
sox -n -r 44100 -c 2 -b 16 "$bench/music/ten.wav" synth 10 sine 440 vol 0.5
eval "export $(scripts/pulse-rig.sh start "$bench/pulse")"
# Debian's settings, with the paths and the output changed (as scripts/bench-compare.sh does).
conf() {
    grep -Ev '^[[:space:]]*(music_directory|playlist_directory|db_file|log_file|pid_file|state_file|sticker_file|user|group|bind_to_address|port)[[:space:]]' "$1"
    printf 'music_directory "%s/music"\nplaylist_directory "%s"\ndb_file "%s/db"\nstate_file "%s/state"\nbind_to_address "127.0.0.1"\nport "6613"\n' "$bench" "$bench" "$bench" "$bench"
    printf 'audio_output {\n    type "alsa"\n    name "rig"\n    device "pulse"\n    mixer_type "none"\n}\n'
}
conf "$copy/etc/mpd.conf" > "$bench/trixie.conf"
conf /etc/mpd.conf > "$bench/bookworm.conf"
cat > "$bench/measure.sh" <<SH
#!/bin/bash
# measure.sh CONF: starts mpd on CONF, and prints its memory idle and after playing.
export PULSE_SERVER=$PULSE_SERVER HOME=$bench MPD_HOST=127.0.0.1 MPD_PORT=6613
rm -f $bench/db $bench/state
mpd --no-daemon "\$1" 2>>$bench/mpd.log & pid=\$!
until mpc status >/dev/null 2>&1; do sleep 0.05; done
mpc -q update --wait; sleep 2
idle=\$(awk '/VmRSS/ { printf "%.1f", \$2 / 1024 }' /proc/\$pid/status)
mpc -q clear; mpc -q add ten.wav; mpc -q play; sleep 11
after=\$(awk '/VmRSS/ { printf "%.1f", \$2 / 1024 }' /proc/\$pid/status)
private=\$(awk '/^Private_(Clean|Dirty)/ { t += \$2 } END { printf "%.1f", t / 1024 }' /proc/\$pid/smaps_rollup)
echo "\$(mpd --version | head -n 1 | awk '{ print \$NF }'): idle RSS \$idle MB, after playing \$after MB, private \$private MB"
kill \$pid; wait \$pid 2>/dev/null
SH
chmod +x "$bench/measure.sh"
echo "trixie MPD $(in_target "$copy" "$bench/measure.sh $bench/trixie.conf")"
echo "this machine's MPD $("$bench/measure.sh" "$bench/bookworm.conf")"
