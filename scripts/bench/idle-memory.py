#!/usr/bin/env python3
"""Idle memory of jukeboxd with the web remote off and on: resident memory (VmRSS) and anonymous
memory (smaps_rollup) two seconds after it is ready, median of RUNS starts each.

Usage: idle-memory.py --bin DIR [--bin DIR …] [--runs N]   (one column per binary folder)
"""
import argparse, os, shutil, statistics, struct, subprocess, sys, tempfile, time

def wav(path):
    frames = 8000
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
        out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))

def measure(binary, work, http):
    args = [os.path.join(binary, "jukeboxd"), os.path.join(work, "s.json"), "--socket", os.path.join(work, "c.sock"),
            "--state", os.path.join(work, "state.json"), "--device", "null"]
    if http:
        args += ["--http", "127.0.0.1:0"]
    daemon = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        wanted = "web remote listening" if http else "control socket listening"
        for line in daemon.stderr:
            if wanted in line:
                break
        else:
            return None  # this build has no web remote
        time.sleep(2)
        status = open(f"/proc/{daemon.pid}/status").read()
        rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])
        rollup = open(f"/proc/{daemon.pid}/smaps_rollup").read()
        anonymous = int(next(line for line in rollup.splitlines() if line.startswith("Anonymous:")).split()[1])
        return rss, anonymous
    finally:
        daemon.terminate()
        daemon.wait()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-memory-")
    try:
        wav(os.path.join(work, "a.wav"))
        with open(os.path.join(work, "s.json"), "w") as out:
            out.write('{ "interval": { "min": "1h", "max": "1h" }, "clips": [ { "file": "a.wav" } ] }')
        for binary in args.bin:
            for http in (False, True):
                samples = [measure(binary, work, http) for _ in range(args.runs)]
                if None in samples:
                    continue
                rss = statistics.median(s[0] for s in samples) / 1024
                anonymous = statistics.median(s[1] for s in samples) / 1024
                print(f"{binary}: http {'on' if http else 'off'}: RSS {rss:.1f} MB, anonymous {anonymous:.1f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
