#!/usr/bin/env bash
# Installs what is needed, builds jukeboxd and plays the demo session in clips/.
# Extra arguments go to jukeboxd, e.g. --device plughw:1,0 or --log-level debug.
set -euo pipefail
cd "$(dirname "$0")/.."
# Swift first: installing packages for a build that cannot run helps nobody.
source scripts/require-swift.sh
scripts/install-deps.sh
swift build -c release --product jukeboxd
swift build -c release --product jukebox
echo "Control it from another shell with $(pwd)/.build/release/jukebox (status, play water, skip, watch…)."
exec .build/release/jukeboxd clips/session.json "$@"
