#!/bin/sh
# Writes scripts/link-order.txt: the functions jukeboxd runs when it starts, idles, plays clips
# through ALSA, reloads, and serves the control socket and the web remote, in the order
# Valgrind's callgrind first lists them. Release builds link these first (see Package.swift), so
# the code the daemon runs sits together instead of spread over the whole binary: the kernel
# maps 64 KB around each page it runs, so spread-out code costs resident memory for the
# daemon's whole life. Run it again after large changes (it needs valgrind); names that no
# longer exist are skipped by the linker.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --scratch-path .build-static >/dev/null
work=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
strip --strip-debug -o "$work/jukeboxd" .build-static/release/jukeboxd
python3 - "$work" <<'PY'
import struct, sys
work = sys.argv[1]
frames = 8000
with open(f"{work}/a.wav", "wb") as out:
    out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
    out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))
open(f"{work}/s.json", "w").write('{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }')
PY
port=18765
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
    "$work/jukeboxd" "$work/s.json" --socket "$work/c.sock" --state "$work/state.json" \
    --device "file:FILE=$work/out.raw,FORMAT=raw" --http "127.0.0.1:$port" 2>"$work/log" &
daemon=$!
until grep -q "web remote listening" "$work/log"; do sleep 1; done
jukebox() { .build-static/release/jukebox --socket "$work/c.sock" "$@" >/dev/null; }
jukebox play a
until grep -q "played a" "$work/log"; do sleep 1; done
jukebox status; jukebox pause; jukebox play a; jukebox resume
jukebox history; jukebox clips; jukebox volume 50; jukebox reload
curl -s "http://127.0.0.1:$port/" >/dev/null
curl -s "http://127.0.0.1:$port/app.js" >/dev/null
curl -s -X POST "http://127.0.0.1:$port/rpc" -d '{"jsonrpc":"2.0","id":1,"method":"status"}' >/dev/null
timeout 3 curl -s -N "http://127.0.0.1:$port/events" >/dev/null || true
jukebox pause; jukebox resume
sleep 3
kill -TERM "$daemon"; wait "$daemon" || true
python3 - "$work/callgrind.out" "$work/jukeboxd" scripts/link-order.txt <<'PY'
import re, subprocess, sys
profile, binary, target = sys.argv[1:]
defined = set(line.split()[-1] for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines())
objects, names, order, seen, current = {}, {}, [], set(), None
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
