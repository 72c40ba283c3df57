#!/bin/sh
# Writes scripts/link-order.txt: the functions jukeboxd runs when it starts, idles, plays clips
# through ALSA, reloads, and serves the control socket, the web remote and MQTT, in the order
# Valgrind's callgrind first lists them; and scripts/client-link-order.txt, the same for the
# `jukebox` client's commands. Release builds link these first (see Package.swift), so
# the code the daemon runs sits together instead of spread over the whole binary: the kernel
# maps 64 KB around each page it runs, so spread-out code costs resident memory for the
# daemon's whole life. Run it again after large changes (it needs valgrind); names that no
# longer exist are skipped by the linker.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --scratch-path .build-static >/dev/null
work=$(mktemp -d)
daemon=""
trap 'kill $daemon ${broker:-} 2>/dev/null || true; rm -rf "$work"' EXIT
strip --strip-debug -o "$work/jukeboxd" .build-static/release/jukeboxd
strip --strip-debug -o "$work/jukebox" .build-static/release/jukebox
python3 - "$work" <<'PY'
import struct, sys
work = sys.argv[1]
frames = 8000
with open(f"{work}/a.wav", "wb") as out:
    out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
    out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))
PY
jukebox() { .build-static/release/jukebox --socket "$work/c.sock" "$@" >/dev/null; }

# One run under callgrind: start, play through ALSA, the CLI's commands, a reload, and what the
# front end named by $1 does (core: none; web: the page and the API; mqtt: a command).
profile() {
    front=$1
    rm -f "$work/state.json" "$work/c.sock" "$work/out.raw"
    extra=""; mqtt=""
    [ "$front" = web ] && extra="--http 127.0.0.1:18765"
    [ "$front" = mqtt ] && mqtt='"mqtt": { "broker": "mqtt://127.0.0.1:18766" }, '
    printf '{ "interval": { "min": "1h", "max": "1h" }, %s"clips": [ { "file": "a.wav" } ] }' "$mqtt" > "$work/s.json"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$front.out" \
        "$work/jukeboxd" "$work/s.json" --socket "$work/c.sock" --state "$work/state.json" \
        --device "file:FILE=$work/out.raw,FORMAT=raw" $extra 2>"$work/$front.log" &
    daemon=$!
    until grep -q "control socket listening" "$work/$front.log"; do sleep 1; done
    jukebox play a
    until grep -q "played a" "$work/$front.log"; do sleep 1; done
    jukebox status; jukebox pause; jukebox play a; jukebox resume
    jukebox history; jukebox clips; jukebox volume 50; jukebox reload
    if [ "$front" = web ]; then
        until grep -q "web remote listening" "$work/$front.log"; do sleep 1; done
        curl -s "http://127.0.0.1:18765/" >/dev/null
        curl -s "http://127.0.0.1:18765/app.js" >/dev/null
        curl -s -X POST "http://127.0.0.1:18765/rpc" -d '{"jsonrpc":"2.0","id":1,"method":"status"}' >/dev/null
        timeout 3 curl -s -N "http://127.0.0.1:18765/events" >/dev/null || true
    fi
    if [ "$front" = mqtt ]; then
        until grep -q "MQTT connected" "$work/$front.log"; do sleep 1; done
        mosquitto_pub -p 18766 -t jukeboxd/s/command/volume -m 60
    fi
    jukebox pause; jukebox resume
    if [ "$front" = core ]; then
        # The client's commands, each a process of its own, as scripts and people run them.
        n=0
        for command in status queue clips "--json status" next history skip pause resume "play a" "volume 50"; do
            n=$((n + 1))
            # shellcheck disable=SC2086
            valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/client.$n.out" \
                "$work/jukebox" --socket "$work/c.sock" $command >/dev/null 2>&1
        done
    fi
    sleep 3
    kill -TERM "$daemon"; wait "$daemon" || true
}

fronts="core web"
if [ -x /usr/sbin/mosquitto ]; then
    # MQTT too, when mosquitto is installed: a broker of the script's own.
    printf 'listener 18766 127.0.0.1\nallow_anonymous true\npersistence false\n%s' "$([ "$(id -u)" = 0 ] && echo 'user root')" > "$work/mosquitto.conf"
    /usr/sbin/mosquitto -c "$work/mosquitto.conf" 2>/dev/null &
    broker=$!
    fronts="core web mqtt"
fi
for front in $fronts; do profile "$front"; done
# What every daemon runs first, then what only the web remote runs, then what only MQTT runs:
# a daemon without them keeps their code out of its pages.
order() {
python3 - "$@" <<'PY'
import re, subprocess, sys
binary, target, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
defined = set(line.split()[-1] for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines())
order, seen = [], set()
for profile in profiles:
  objects, names, current = {}, {}, None
  for line in open(profile, errors="replace"):
    line = line.rstrip("\n")
    if m := re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line):
        kind, number, path = m.groups()
        if path: objects[number] = path
        if kind == "ob": current = objects.get(number)
    elif m := re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line):
        kind, number, name = m.groups()
        if name: names[number] = re.sub(r"'\d+$", "", name)
        if kind == "fn" and current == binary:
            name = names[number]
            if name in defined and name not in seen:
                seen.add(name)
                order.append(name)
open(target, "w").write("\n".join(order) + "\n")
print(f"{target}: {len(order)} functions")
PY
}
order "$work/jukeboxd" scripts/link-order.txt $(for front in $fronts; do echo "$work/$front.out"; done)
order "$work/jukebox" scripts/client-link-order.txt $(n=1; while [ -f "$work/client.$n.out" ]; do echo "$work/client.$n.out"; n=$((n + 1)); done)
