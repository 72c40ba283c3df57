#!/usr/bin/env bash
# The upload figures in BENCHMARKS.md ("Uploads"): `jukebox add` of a 20 MB WAV beside `cp`,
# and the time until an added 1 MB clip is pickable. Built as docs/raspberry-pi.md builds it.
#
#   scripts/bench/upload.sh [RUNS]      (RUNS per figure, default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh python3
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
"${build[@]}" --product jukeboxd >/dev/null
"${build[@]}" --product jukebox >/dev/null
python3 scripts/bench/upload.py --bin "$("${build[@]}" --show-bin-path)" --runs "${1:-5}"
