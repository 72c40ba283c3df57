#!/usr/bin/env python3
"""The upload figures in BENCHMARKS.md ("Uploads"), measured from outside the daemon:

- `jukebox add` of a 20 MB WAV over the control socket, end to end (the bytes sent, written
  and fsynced, the file decoded completely, the session file rewritten), beside `cp` of the
  same file on the same disk, and `cp` followed by `sync` of the copy;
- the time from starting `jukebox add` of a 1 MB clip until it is pickable: jukeboxd answers
  once the clip is in the session file and in the scheduler's bag, and the script checks
  with `jukebox clips` that it is there.

Usage: upload.py --bin DIR [--runs N]
"""
import argparse, json, os, shutil, statistics, struct, subprocess, sys, tempfile, time

def wav(path, size):
    frames = size // 4
    header = b"RIFF" + struct.pack("<I", 36 + frames * 4) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 2, 44100, 44100 * 4, 4, 16)
    header += b"data" + struct.pack("<I", frames * 4)
    block = bytes((i * 7) % 256 for i in range(4 * 4096))
    with open(path, "wb") as out:
        out.write(header)
        left = frames * 4
        while left > 0:
            out.write(block[:min(left, len(block))])
            left -= min(left, len(block))

def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-upload-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    daemon = None
    try:
        clips, mine = os.path.join(work, "clips"), os.path.join(work, "mine")
        os.makedirs(clips)
        os.makedirs(mine)
        wav(os.path.join(clips, "seed.wav"), 64 * 1024)
        big, small = os.path.join(mine, "big.wav"), os.path.join(mine, "small.wav")
        wav(big, 20 * 1000 * 1000)
        wav(small, 1000 * 1000)
        session = os.path.join(clips, "s.json")
        with open(session, "w") as out:
            json.dump({"interval": {"min": "1h", "max": "1h"}, "maxUploadSize": 64 << 20, "clips": [{"file": "seed.wav"}]}, out)
        sock = os.path.join(work, "c.sock")
        daemon = subprocess.Popen([os.path.join(args.bin, "jukeboxd"), session, "--socket", sock, "--state", os.path.join(work, "state.json"),
                                   "--device", "null"], stderr=subprocess.PIPE, text=True)
        for line in daemon.stderr:
            if "control socket listening" in line:
                break
        jukebox = [os.path.join(args.bin, "jukebox"), "--socket", sock]
        size = os.path.getsize(big)
        add, copy, copy_sync, pickable = [], [], [], []
        for run in range(args.runs):
            add.append(timed(jukebox + ["add", big, "--id", f"big{run}"]))
            target = os.path.join(clips, f"copy{run}.wav")
            copy.append(timed(["cp", big, target]))
            os.unlink(target)
            copy_sync.append(timed(["sh", "-c", 'cp "$1" "$2" && sync "$2"', "sh", big, target]))
            os.unlink(target)
            pickable.append(timed(jukebox + ["add", small, "--id", f"small{run}"]))
            listed = json.loads(subprocess.run(jukebox + ["--json", "clips"], check=True, capture_output=True, text=True).stdout)
            assert any(clip["id"] == f"small{run}" and not clip.get("problem") for clip in listed["clips"]), "the clip is not in the session"
        mb = size / 1e6
        print(f"| `jukebox add` of a {mb:.0f} MB WAV (bytes over the socket, fsynced, decoded completely, session rewritten) "
              f"| {mb / statistics.median(add):.0f} MB/s ({statistics.median(add) * 1000:.0f} ms) "
              f"| `cp` {mb / statistics.median(copy):.0f} MB/s, `cp` + `sync` {mb / statistics.median(copy_sync):.0f} MB/s "
              f"| {statistics.median(copy_sync) / statistics.median(add):.2f} × cp + sync | ≥ 100 MB/s | {'met' if mb / statistics.median(add) >= 100 else 'not met'} |")
        print(f"| from `jukebox add` of a 1 MB clip to the clip being pickable | {statistics.median(pickable) * 1000:.1f} ms "
              f"(spread {min(pickable) * 1000:.1f}–{max(pickable) * 1000:.1f} ms) | | | | |")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
