#!/usr/bin/env bash
# Installs what is needed and runs the whole test suite. No sound card is needed: ALSA is
# exercised through its `file` plugin, and real-time playback through a PulseAudio null sink
# (scripts/pulse-rig.sh) that the tests start and stop themselves. Tests that need a second
# Unix user make one with useradd (as root), and remove it after. ffmpeg converts recordings
# in the upload tests; Chromium, its driver and Selenium drive the web remote page; the MQTT
# tests start their own mosquitto broker; espeak-ng speaks the announcements; the Snapcast tests start their own snapserver and snapclients.
set -euo pipefail
cd "$(dirname "$0")/.."
# Swift first: installing packages for a build that cannot run helps nobody.
source scripts/require-swift.sh
scripts/install-deps.sh --tests
# aioesphomeapi, Home Assistant's side of the media player's end-to-end tests (.build/ha-venv).
scripts/esphome/client-venv.sh >/dev/null
# A short fuzz run of the session loader, the control protocol, MQTT commands, HTTP
# requests and uploads (scripts/fuzz.sh).
scripts/fuzz.sh --seconds 80
# The tests that hear the paced sound card or keep a broker's timing run in a pass of their
# own, after the rest: on two cores, the rest of the suite beside them (browsers, TLS
# handshakes, ffmpeg) can take the CPU from them for seconds. The page's tests, which hear
# the card too, start Chromium, so they have a last pass of their own: a browser starting
# beside the Snapcast rooms once held a debug daemon off the CPU for more than its 100 ms
# lead, and the rooms heard a 10 ms gap. The ducked players' tests are timed too: a player
# must answer within the daemon's one second, and beside the rest the test's own side of the
# conversation could wait longer than that for a core. Two tests that step into a moment of the
# daemon's (a ramp during which MPD's volume is set, a write held back in fsync until the daemon is
# killed) have a short pass of their own after the first, so that neither the whole suite nor
# the rooms' timing competes with them. The calendar reader's limits (libical parsing 4 MB and
# 20 000 events, several times) and the fetchers' (4 MB bodies, and 20 MB media, through a Python server) join that
# short pass: seconds of CPU at the start of the first pass once held the music bed's suites
# past their 10 s to open a pipe. On a machine two or three times slower than usual, the first
# pass's CPU held those suites past their 10 s all the same, and the suites that step a manual
# clock through two days minute by minute (quiet hours, the volume's steps, fixed times in quiet
# hours) past their minute: they run in the short pass too, as do the media player's limits,
# whose keepalive gives a client seconds to answer a ping. Arguments go to every pass.
timed='\.(RealTimeTests|SnapcastTests|AnnouncementTests|MQTTClientTests|PlayerTargetTests|SnapserverBatchTests)/'
moments='\.(ESPHomeServerTests|DuckFaultTests|AlertDuckTests|OutboxTests|ICalendarTests|HTTPCalendarFetcherTests|HTTPMediaFetcherTests|MixingSinkTests|OutputHandoverTests|QuietHoursTests|VolumeControlTests|ClipTimetableTests)/'
browser='\.WebPageTests/'
swift test --skip "$timed|$moments|$browser" "$@"
swift test --filter "$moments" "$@"
swift test --filter "$timed" "$@"
swift test --filter "$browser" "$@"
