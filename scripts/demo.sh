#!/usr/bin/env bash
# Installs what is needed, builds jukeboxd and plays the demo session in clips/ (or yours).
#
#   scripts/demo.sh [--no-sound-card] [SESSION] [JUKEBOXD OPTIONS…]    (in any order)
#   scripts/demo.sh --help
#
# Options go to jukeboxd, e.g. --device plughw:1,0, --duration 10m or --log-level debug; they
# are checked before anything is built. SESSION: a session file of your own (default:
# clips/session.json). --no-sound-card: plays to a sound card of PulseAudio's that nobody hears
# (a null sink that keeps a real card's pace, scripts/pulse-rig.sh), started here and stopped
# when the demo ends: clips take as long as they last, so `jukebox queue`, `skip` and `pause`
# show what they do (the clip "slow" lasts 25 s).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
}
# jukeboxd's own options, and whether each takes a value (=). DemoOptionTests keeps this list
# the same as `jukeboxd --help`.
jukeboxd_options="--device= --output= --log-level= --seed= --duration= --socket= --socket-group= --state= --queue-limit= --http= --http-password-file= --check --new-esphome-key"
takes_value() {  # OPTION: 0 when it takes a value, 1 when a flag, 2 when jukeboxd has none
    local option=${1%%=*}
    case " $jukeboxd_options " in
    *" $option= "*) return 0 ;;
    *" $option "*) return 1 ;;
    *) return 2 ;;
    esac
}

no_card=false
session=clips/session.json
options=()
while [ $# -gt 0 ]; do
    case "$1" in
    --no-sound-card) no_card=true ;;
    -h | --help) usage; exit 0 ;;
    -*)
        status=0
        takes_value "$1" || status=$?
        case $status in
        0)
            options+=("$1")
            if [[ "$1" != *=* ]]; then
                [ $# -ge 2 ] || { echo "demo.sh: $1 needs a value (see jukeboxd --help)" >&2; exit 64; }
                options+=("$2")
                shift
            fi ;;
        1) options+=("$1") ;;
        *) echo "demo.sh: jukeboxd has no option $1 (scripts/demo.sh --help; jukeboxd's options: ${jukeboxd_options//=/})" >&2; exit 64 ;;
        esac ;;
    *)
        [ -f "$1" ] || { echo "demo.sh: $1: no such session file" >&2; exit 66; }
        session=$1 ;;
    esac
    shift
done

# Swift first: installing packages for a build that cannot run helps nobody.
source scripts/require-swift.sh
if $no_card; then
    scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins
else
    scripts/install-deps.sh
fi
# A debug build: about half the time of a release build, and plenty fast for the demo. The
# Raspberry Pi's package is the release build (docs/raspberry-pi.md).
swift build --product jukeboxd
swift build --product jukebox
echo "Control it from another shell with $(pwd)/.build/debug/jukebox (status, queue, play slow, skip, pause, watch…); Ctrl-C stops it."
if ! $no_card; then
    exec .build/debug/jukeboxd "$session" ${options[@]+"${options[@]}"}
fi
rig=$(mktemp -d "${TMPDIR:-/tmp}/jukeboxd-demo.XXXXXX")
trap 'scripts/pulse-rig.sh stop "$rig" >/dev/null 2>&1 || true; rm -rf "$rig"' EXIT
export "$(scripts/pulse-rig.sh start "$rig")"
echo "No sound card: playing to PulseAudio's null sink in $rig, at a sound card's pace; nothing is heard."
status=0
.build/debug/jukeboxd "$session" --device pulse ${options[@]+"${options[@]}"} || status=$?
exit "$status"
