#!/usr/bin/env bash
# Installs what is needed and runs the whole test suite. No sound card is needed: ALSA is
# exercised through its `file` plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift test "$@"
