#!/usr/bin/env bash
# The "Announcements over music" figures in BENCHMARKS.md: an urgent clip cutting in beside
# MPD's insert-and-next, MPD's music ducked under a clip (when it is down and back, as
# heard), and MPD's music through the music bed (its extra delay, its CPU alone and with a
# clip over it, beside MPD playing to the rig itself), on the paced rig, in one run. Built as
# docs/raspberry-pi.md builds it.
#
#   scripts/bench/music.sh [RUNS]      (RUNS per figure, default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins mpd mpc sox python3
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
"${build[@]}" --product jukeboxd >/dev/null
"${build[@]}" --product jukebox >/dev/null
bin=$("${build[@]}" --show-bin-path)

work=$(mktemp -d /tmp/jukebox-music-XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; done
    [ -n "$cgroups" ] && rmdir "$cgroups"/jukebox-bench-$$-* 2>/dev/null || true
    scripts/pulse-rig.sh stop-capture "$work/pulse" 2>/dev/null || true
    scripts/pulse-rig.sh stop "$work/pulse" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# Each daemon in a cgroup (v2) of its own where the machine allows: its CPU is then the
# cgroup's, every thread it ran counted, those that ended between two readings too
# (scripts/bench/soundclock.py, cgroup_usage).
cgroups=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
own_cgroup() {
    [ -n "$cgroups" ] || return 0
    local folder="$cgroups/jukebox-bench-$$-$2"
    mkdir -p "$folder" 2>/dev/null && echo "$1" >"$folder/cgroup.procs" 2>/dev/null || true
}
eval "export $(scripts/pulse-rig.sh start "$work/pulse")"
export HOME="$work/pulse/home"

mkdir -p "$work/music"
sox -n -r 44100 -c 2 -b 16 "$work/music/long.wav" synth 20 sine 400 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$work/music/bell.wav" synth 1 sine 1000 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$work/music/bell2.wav" synth 2 sine 1000 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$work/music/music.wav" synth 600 sine 200 vol 0.5
port=6612
cat >"$work/mpd.conf" <<CONF
music_directory "$work/music"
playlist_directory "$work"
db_file "$work/mpd.db"
state_file "$work/mpd.state"
bind_to_address "127.0.0.1"
port "$port"
user "$(id -un)"
auto_update "no"
zeroconf_enabled "no"
audio_output {
    type "alsa"
    name "rig"
    device "pulse"
    mixer_type "software"
    buffer_time "100000"
}
audio_output {
    type "fifo"
    name "bed"
    path "$work/bed.fifo"
    format "44100:16:2"
    mixer_type "software"
    enabled "no"
}
CONF
clips='"clips": [ { "file": "long.wav" }, { "file": "bell.wav" }, { "file": "bell2.wav" } ]'
cat >"$work/ducked.json" <<JSON
{ "device": "pulse", "clipsDirectory": "music", "interval": { "min": "1h", "max": "1h" },
  "duck": { "mpd": ["127.0.0.1:$port"], "level": "-18dB", "attack": "300ms", "release": "1s" }, $clips }
JSON
cat >"$work/bed.json" <<JSON
{ "device": "pulse", "clipsDirectory": "music", "interval": { "min": "1h", "max": "1h" },
  "bed": { "pipe": "$work/bed.fifo", "format": "44100:16:2", "level": "-18dB", "attack": "300ms", "release": "1s" }, $clips }
JSON
cat >"$work/plain.json" <<JSON
{ "device": "pulse", "clipsDirectory": "music", "interval": { "min": "1h", "max": "1h" }, $clips }
JSON

mpd --no-daemon "$work/mpd.conf" 2>"$work/mpd.log" &
pids+=($!)
mpd=$!
own_cgroup "$mpd" mpd
until mpc -p "$port" status >/dev/null 2>&1; do sleep 0.05; done
mpc -p "$port" update --wait >/dev/null
start_jukeboxd() {
    "$bin/jukeboxd" "$work/$1.json" --socket "$work/$1.sock" --state "$work/$1.state" --log-level warning 2>>"$work/$1.log" &
    pids+=($!)
    own_cgroup "$!" "$1"
    until [ -S "$work/$1.sock" ] && "$bin/jukebox" --socket "$work/$1.sock" status >/dev/null 2>&1; do sleep 0.05; done
}
start_jukeboxd ducked; ducked=${pids[-1]}
start_jukeboxd plain; plain=${pids[-1]}
scripts/pulse-rig.sh capture "$work/pulse" "$work/capture.raw"
python3 scripts/bench/music.py --bin "$bin" --socket "$work/ducked.sock" --plain-socket "$work/plain.sock" --mpd-port "$port" \
    --jukeboxd-pid "$ducked" --plain-pid "$plain" --capture "$work/capture.raw" --runs "${1:-5}"
# The bed on its own: the daemons above stopped, so only its CPU is on the machine's two cores.
kill "$ducked" "$plain"; wait "$ducked" "$plain" 2>/dev/null || true
start_jukeboxd bed; bed=${pids[-1]}
python3 scripts/bench/music.py --phase bed --bin "$bin" --socket "$work/bed.sock" --mpd-port "$port" \
    --jukeboxd-pid "$bed" --mpd-pid "$mpd" --capture "$work/capture.raw" --runs "${1:-5}"
