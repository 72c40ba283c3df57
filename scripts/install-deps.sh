#!/usr/bin/env bash
# Installs the system packages jukeboxd builds and tests against (Debian 12 / Raspberry Pi OS).
# Runs apt-get only for what is missing, through sudo when not root.
set -euo pipefail

packages=(pkg-config libasound2-dev libsndfile1-dev libsoxr-dev alsa-utils tzdata "$@")
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update
run apt-get install -y --no-install-recommends "${missing[@]}"
