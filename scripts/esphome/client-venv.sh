#!/usr/bin/env bash
# Makes .build/ha-venv: a Python environment with aioesphomeapi, the library Home Assistant's
# ESPHome integration uses, at the version jukeboxd's api.proto messages come from. The media
# player's end-to-end tests drive jukeboxd with it (scripts/esphome/ha-client.py), and
# generate.sh reads api.proto from it. Prints the environment's python.
set -euo pipefail
AIOESPHOMEAPI_VERSION=46.23.0
cd "$(dirname "$0")/../.."
venv=$PWD/.build/ha-venv
if ! "$venv/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('aioesphomeapi') != '$AIOESPHOMEAPI_VERSION')" 2>/dev/null; then
    rm -rf "$venv"
    mkdir -p .build
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "aioesphomeapi==$AIOESPHOMEAPI_VERSION" >&2
fi
echo "$venv/bin/python3"
