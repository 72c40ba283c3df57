#!/usr/bin/env python3
"""Latency and gap figures for scripts/bench-compare.sh, timed from outside the players.

Every player runs with scripts/bench/pcm-trace.so preloaded, which notes with
CLOCK_MONOTONIC when it opens the PCM and first writes to it. The command being timed
(`jukebox play`, `aplay`, `jukebox skip`, `mpc next`) is started by `stamp`, which notes
the same clock just before it execs the command.

  latency.py stamp STAMP -- CMD...      write the time to STAMP, then exec CMD
  latency.py first-frame TRACE STAMP    ms from STAMP to the first write after it
  latency.py skip CAPTURE TRACE STAMP   ms from STAMP to the end of sound in CAPTURE
  latency.py cut TRACE STAMP            ms from STAMP to the first drop or rewind after it
  latency.py gap CAPTURE                longest run of silent frames inside the sound in CAPTURE
"""
import os
import struct
import sys
import time

RATE = 44_100
# A sample is sound when it is louder than this (the clips are sines at half scale; a
# fade ends well below it).
LOUD = 64


def read_trace(path):
    events = []
    if os.path.exists(path):
        for line in open(path):
            name, _, when = line.strip().partition(" ")
            if when.isdigit():
                events.append((name, int(when)))
    return events


def left_channel(path):
    """The capture's left channel (raw s16le stereo), and the indices of its loud samples."""
    data = open(path, "rb").read()
    whole = len(data) // 4 * 4
    left = struct.unpack("<%dh" % (whole // 2), data[:whole])[::2]
    return left, [i for i, s in enumerate(left) if abs(s) > LOUD]


def first_write_after(trace, stamp, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, when in read_trace(trace):
            if name == "first-write" and when >= stamp:
                return when
        time.sleep(0.01)
    sys.exit(f"latency.py: no first write in {trace} after the command started")


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "stamp" and len(argv) > 4 and argv[3] == "--":
        with open(argv[2], "w") as f:
            f.write(str(time.monotonic_ns()))
        os.execvp(argv[4], argv[4:])
    elif command == "first-frame" and len(argv) == 4:
        stamp = int(open(argv[3]).read())
        print("%.2f" % ((first_write_after(argv[2], stamp) - stamp) / 1e6))
    elif command == "skip" and len(argv) == 5:
        # The capture's clock is the sink's: where sound starts in it is where the clip's
        # first write landed, so the end of sound is placed on the monotonic clock by
        # counting samples from there. Both ends pass through the same sink latency.
        skip = int(open(argv[4]).read())
        writes = [when for name, when in read_trace(argv[3]) if name == "first-write" and when < skip]
        if not writes:
            sys.exit("latency.py: the clip was never written before the skip")
        _, loud = left_channel(argv[2])
        if not loud:
            sys.exit("latency.py: the capture is silent")
        heard_ns = (loud[-1] - loud[0]) * 1e9 / RATE
        print("%.2f" % ((writes[-1] + heard_ns - skip) / 1e6))
    elif command == "cut" and len(argv) == 4:
        stamp = int(open(argv[3]).read())
        cuts = [when for name, when in read_trace(argv[2]) if name in ("drop", "rewind") and when >= stamp]
        if not cuts:
            sys.exit(f"latency.py: no drop or rewind in {argv[2]} after the command started")
        print("%.2f" % ((min(cuts) - stamp) / 1e6))
    elif command == "gap" and len(argv) == 3:
        # A sine crosses zero, but is never silent for more than a frame or two.
        left, loud = left_channel(argv[2])
        if not loud:
            print("nan")
            return
        longest = run = 0
        for sample in left[loud[0]:loud[-1]]:
            run = run + 1 if abs(sample) <= LOUD else 0
            longest = max(longest, run)
        print(longest if longest > 3 else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
