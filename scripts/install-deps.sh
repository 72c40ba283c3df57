#!/usr/bin/env bash
# Installs the system packages jukeboxd builds and tests against (Debian 12 / Raspberry Pi OS).
# Runs apt-get only for what is missing, through sudo when not root. Services that the packages
# it installed start and enable (mosquitto, snapserver, snapclient on a machine with systemd,
# and pulseaudio's for every login) are stopped and disabled again: the tests start their own,
# by pid, and a user's machine is left running nothing new.
set -euo pipefail

packages=(pkg-config libasound2-dev libsndfile1-dev libsoxr-dev libebur128-dev libical-dev libavahi-client-dev zlib1g-dev alsa-utils tzdata)
# --tests: also what the tests run (see scripts/test.sh).
if [ "${1:-}" = --tests ]; then
    shift
    packages+=(pulseaudio pulseaudio-utils libasound2-plugins python3 ffmpeg curl chromium chromium-driver python3-selenium
        mosquitto mosquitto-clients espeak-ng snapserver snapclient mpd strace openssl libnss3-tools python3-prometheus-client python3-venv
        iproute2 dbus-daemon avahi-daemon avahi-utils)
fi
packages+=("$@")
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update
run apt-get install -y --no-install-recommends "${missing[@]}"
# The services the newly installed packages start now and at boot: stopped and disabled.
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    for package in "${missing[@]}"; do
        for unit in $(dpkg-query -L "$package" 2>/dev/null | sed -n -E 's#^/(usr/)?lib/systemd/system/([^/@]*\.(service|socket))$#\2#p'); do
            # The system's message bus, which logins and services need, is never stopped.
            case $unit in dbus.service | dbus.socket) continue ;; esac
            if systemctl is-enabled --quiet "$unit" 2>/dev/null || systemctl is-active --quiet "$unit"; then
                echo "install-deps: stopping and disabling $unit (installed with $package; the tests start their own)"
                run systemctl disable --now "$unit" >/dev/null 2>&1 || true
            fi
        done
        # User services enabled for every login (pulseaudio's), which would compete with a
        # desktop's own sound server (PipeWire) at the next login.
        for unit in $(dpkg-query -L "$package" 2>/dev/null | sed -n -E 's#^/(usr/)?lib/systemd/user/([^/@]*\.(service|socket))$#\2#p'); do
            if systemctl --global is-enabled --quiet "$unit" 2>/dev/null; then
                echo "install-deps: disabling $unit for every user's login (installed with $package; the tests start their own)"
                run systemctl --global disable "$unit" >/dev/null 2>&1 || true
            fi
        done
    done
fi
