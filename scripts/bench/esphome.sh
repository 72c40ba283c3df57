#!/usr/bin/env bash
# The "Home Assistant's media player" figures in BENCHMARKS.md, in one run with the release
# build (as docs/raspberry-pi.md builds it): an announcement's address to its sound on the
# paced rig, sent by aioesphomeapi (Home Assistant's own library) with the key, beside
# `jukebox play --now` of the same file; and what the front end adds to an idle daemon
# (memory, and CPU over 60 s with Home Assistant connected), against the same daemon without
# the `esphome` section, and what its announcement on mDNS adds (as root: avahi-daemon on the
# network of scripts/mdns-rig.sh).
#
#   scripts/bench/esphome.sh [RUNS]      (RUNS per figure, default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10}
scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins python3 python3-venv
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
"${build[@]}" --product jukeboxd >/dev/null
"${build[@]}" --product jukebox >/dev/null
bin=$("${build[@]}" --show-bin-path)
python=$(scripts/esphome/client-venv.sh)

work=$(mktemp -d /tmp/jukebox-esphome-XXXXXX)
cleanup() {
    scripts/mdns-rig.sh stop "$work/mdns" 2>/dev/null || true
    scripts/pulse-rig.sh stop-capture "$work/pulse" 2>/dev/null || true
    scripts/pulse-rig.sh stop "$work/pulse" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
eval "export $(scripts/pulse-rig.sh start "$work/pulse")"
export HOME="$work/pulse/home"
scripts/pulse-rig.sh capture "$work/pulse" "$work/capture.raw"
bus=()
if [ "$(id -u)" -eq 0 ]; then
    scripts/install-deps.sh iproute2 dbus-daemon avahi-daemon avahi-utils
    scripts/mdns-rig.sh start "$work/mdns" >/dev/null
    scripts/mdns-rig.sh avahi-start "$work/mdns"
    bus=(--bus "unix:path=$work/mdns/bus")
else
    echo "esphome: not root, so the announcement on mDNS is not measured" >&2
fi
"$python" scripts/bench/esphome.py --bin "$bin" --work "$work" --capture "$work/capture.raw" --runs "$runs" "${bus[@]}"
