#!/usr/bin/env bash
# Fuzzes the session-file loader, the control protocol, MQTT command payloads (through a
# mosquitto of its own), HTTP requests and forms, Home Assistant's media player (ESPHome's
# frames and handshakes), and uploads (float samples with NaN and
# infinities, hostile names, files ffmpeg must refuse) against the built jukeboxd, from the seed
# corpus in scripts/fuzz/corpus/. A short run is part of scripts/test.sh; run it
# longer by hand: scripts/fuzz.sh --seconds 600 --seed 7. Builds the debug binaries first.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product jukeboxd >/dev/null
exec python3 scripts/fuzz/fuzz.py --bin .build/debug "$@"
