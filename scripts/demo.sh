#!/usr/bin/env bash
# Installs what is needed, builds jukeboxd and plays the demo session in clips/.
#
#   scripts/demo.sh [--no-sound-card] [JUKEBOXD OPTIONS…]
#
# Options go to jukeboxd, e.g. --device plughw:1,0, --duration 10m or --log-level debug.
# --no-sound-card: plays to a sound card of PulseAudio's that nobody hears (a null sink that
# keeps a real card's pace, scripts/pulse-rig.sh), started here and stopped when the demo ends:
# clips take as long as they last, so `jukebox queue`, `skip` and `pause` show what they do.
set -euo pipefail
cd "$(dirname "$0")/.."
# Swift first: installing packages for a build that cannot run helps nobody.
source scripts/require-swift.sh
no_card=false
if [ "${1:-}" = --no-sound-card ]; then
    no_card=true
    shift
fi
if $no_card; then
    scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins
else
    scripts/install-deps.sh
fi
# A debug build: about half the time of a release build, and plenty fast for the demo. The
# Raspberry Pi's package is the release build (docs/raspberry-pi.md).
swift build --product jukeboxd
swift build --product jukebox
echo "Control it from another shell with $(pwd)/.build/debug/jukebox (status, queue, play water, skip, watch…); Ctrl-C stops it."
if ! $no_card; then
    exec .build/debug/jukeboxd clips/session.json "$@"
fi
rig=$(mktemp -d "${TMPDIR:-/tmp}/jukeboxd-demo.XXXXXX")
trap 'scripts/pulse-rig.sh stop "$rig" >/dev/null 2>&1 || true; rm -rf "$rig"' EXIT
export "$(scripts/pulse-rig.sh start "$rig")"
echo "No sound card: playing to PulseAudio's null sink in $rig, at a sound card's pace; nothing is heard."
status=0
.build/debug/jukeboxd clips/session.json --device pulse "$@" || status=$?
exit "$status"
