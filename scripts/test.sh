#!/usr/bin/env bash
# Installs what is needed and runs the whole test suite. No sound card is needed: ALSA is
# exercised through its `file` plugin, and real-time playback through a PulseAudio null sink
# (scripts/pulse-rig.sh) that the tests start and stop themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins python3
swift test "$@"
