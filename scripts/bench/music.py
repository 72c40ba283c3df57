#!/usr/bin/env python3
"""Announcements over music, as a listener hears them on the paced rig (scripts/pulse-rig.sh),
beside MPD as Debian ships it, in one run:

  cut in   from starting `jukebox play --now bell` while a long clip plays to the bell's first
           sound in the capture; beside it, MPD's nearest: `mpc insert bell.wav` and `mpc next`
           while a long song plays.
  duck     MPD plays music (200 Hz, its software mixer, buffer_time 100 ms) while jukeboxd
           plays a 2 s clip with the session's `duck` (-18 dB, attack 300 ms, release 1 s):
           when the music is 15 dB down, against the clip's first heard sample (a lead is
           negative), and when it is back within 1 dB, after the clip's last.
  cpu      jukeboxd's CPU for one ducked 2 s clip (lowering, playing, raising), beside the same
           clip without `duck`.

With --phase bed, MPD's music through jukeboxd's music bed (MPD's fifo output into the bed's
pipe, jukeboxd playing it to the rig), beside MPD playing it to the rig itself (its ALSA output,
buffer_time 100 ms):

  delay    `mpc play` to the music's first sound in the capture, through the bed and through
           MPD's own output: what the bed adds.
  cpu      over 10 s of music: jukeboxd and MPD's fifo output, beside MPD playing to the rig;
           jukeboxd with no music coming in; and jukeboxd over 10 s holding a 2 s clip mixed
           over the music. Each daemon's resident memory after its part (the one without a bed
           after the duck part, with the same clips).
  duck     the music 15 dB down against the clip's first heard sample, back within 1 dB after
           its last (the bed's level -18 dB, attack 300 ms, release 1 s).

Prints `name|median|min|max` lines; scripts/bench/music.sh starts everything and writes them up.

Usage: music.py [--phase duck] --bin DIR --socket PATH --plain-socket PATH --mpd-port PORT --jukeboxd-pid PID --plain-pid PID --capture FILE [--runs N]
       music.py --phase bed --bin DIR --socket PATH --mpd-port PORT --jukeboxd-pid PID --mpd-pid PID --capture FILE [--runs N]
"""
import argparse, math, os, statistics, struct, subprocess, sys, time

from soundclock import clock_offset, cpu_seconds

RATE = 44_100


def amplitude(samples, frequency):
    """Goertzel: the amplitude of `frequency` in `samples` (floats)."""
    coefficient = 2 * math.cos(2 * math.pi * frequency / RATE)
    previous = before = 0.0
    for sample in samples:
        previous, before = sample + coefficient * previous - before, previous
    power = previous * previous + before * before - coefficient * previous * before
    return 2 * math.sqrt(max(power, 0)) / len(samples)


def left(path, start, frames):
    with open(path, "rb") as f:
        f.seek(start * 4)
        data = f.read(frames * 4)
    return [s / 32768 for s in struct.unpack("<%dh" % (len(data) // 2), data)[::2]]


def wait_for_frames(path, frame):
    while os.path.getsize(path) // 4 < frame:
        time.sleep(0.05)


def first_window(path, start, frequency, condition, window=441, limit=20):
    """The first frame at or after `start` of a 10 ms window whose amplitude at `frequency`
    meets `condition`, as the capture is written; None after `limit` seconds of capture."""
    frame = start
    while frame < start + limit * RATE:
        wait_for_frames(path, frame + window)
        if condition(amplitude(left(path, frame, window), frequency)):
            return frame
        frame += window
    return None


def clip_over_music(args, offset, now_frame, play, hold=None):
    """Plays a 2 s clip at 1000 Hz (`play`) over music at 200 Hz, and returns, as heard in the
    capture: when the music was 15 dB down against the clip's first sound (ms; a lead is
    negative), when it was back within 1 dB after the clip's last (ms), and jukeboxd's CPU
    from the command until 1 s after that, or until `hold` s after the command."""
    base_frame = now_frame()
    wait_for_frames(args.capture, base_frame + RATE // 2)
    baseline = amplitude(left(args.capture, base_frame, RATE // 2), 200)
    before = cpu_seconds(args.jukeboxd_pid)
    started = time.monotonic()
    play()
    clip = first_window(args.capture, int((started + offset) * RATE), 1000, lambda a: a > 0.05)
    down = first_window(args.capture, int((started + offset) * RATE), 200, lambda a: a < baseline * 10 ** (-15 / 20))
    clip_end = first_window(args.capture, clip + RATE, 1000, lambda a: a < 0.01)
    back = first_window(args.capture, clip_end, 200, lambda a: a > baseline * 10 ** (-1 / 20))
    time.sleep(1 if hold is None else max(0, started + hold - time.monotonic()))
    return (down - clip) / RATE * 1000, (back - clip_end) / RATE * 1000, cpu_seconds(args.jukeboxd_pid) - before


def spread(values, digits=1):
    return f"{statistics.median(values):.{digits}f}|{min(values):.{digits}f}|{max(values):.{digits}f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--phase", choices=["duck", "bed"], default="duck")
    parser.add_argument("--plain-socket")
    parser.add_argument("--mpd-port", required=True)
    parser.add_argument("--jukeboxd-pid", type=int, required=True)
    parser.add_argument("--plain-pid", type=int)
    parser.add_argument("--mpd-pid", type=int)
    parser.add_argument("--capture", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def jukebox(*words, socket=args.socket):
        subprocess.run([os.path.join(args.bin, "jukebox"), "--socket", socket, *words], check=True, **quiet)

    def mpc(*words):
        subprocess.run(["mpc", "-q", "-p", args.mpd_port, *words], check=True, **quiet)

    offset = clock_offset(args.capture, RATE)
    now_frame = lambda: int((time.monotonic() + offset) * RATE)
    if args.phase == "bed":
        return bed(args, jukebox, mpc, offset, now_frame)

    # Cut in: the bell is 1000 Hz; the long clip 400 Hz. Every tone is a whole number of cycles
    # in a 10 ms window, so none leaks into the window measured for another.
    cut = {"jukeboxd": [], "mpd": []}
    for _ in range(args.runs):
        mpc("stop")
        jukebox("play", "long")
        time.sleep(2)
        started = time.monotonic()
        jukebox("play", "--now", "bell")
        heard = first_window(args.capture, int((started + offset) * RATE), 1000, lambda a: a > 0.05)
        cut["jukeboxd"].append(((heard / RATE) - offset - started) * 1000)
        time.sleep(1.5)
        jukebox("clear")
        jukebox("skip")
        time.sleep(1)
        mpc("clear")
        mpc("add", "long.wav")
        mpc("play")
        time.sleep(2)
        started = time.monotonic()
        mpc("insert", "bell.wav")
        mpc("next")
        heard = first_window(args.capture, int((started + offset) * RATE), 1000, lambda a: a > 0.05)
        cut["mpd"].append(((heard / RATE) - offset - started) * 1000)
        time.sleep(1.5)
        mpc("stop")
        time.sleep(0.5)
    print(f"cut jukeboxd|{spread(cut['jukeboxd'])}")
    print(f"cut mpd|{spread(cut['mpd'])}", flush=True)

    # Duck: MPD's music at 200 Hz, jukeboxd's clip at 1000 Hz.
    mpc("clear")
    mpc("add", "music.wav")
    mpc("volume", "100")
    mpc("play")
    time.sleep(2)
    leads, releases, cpu_ducked, cpu_plain = [], [], [], []
    for _ in range(args.runs):
        lead, release, cpu = clip_over_music(args, offset, now_frame, lambda: jukebox("play", "bell2"))
        leads.append(lead)
        releases.append(release)
        cpu_ducked.append(cpu)
        before = cpu_seconds(args.plain_pid)
        jukebox("play", "bell2", socket=args.plain_socket)
        time.sleep(4.3)
        cpu_plain.append(cpu_seconds(args.plain_pid) - before)
    mpc("stop")
    print(f"duck lead|{spread(leads)}")
    print(f"duck release|{spread(releases)}")
    print(f"cpu ducked|{spread(cpu_ducked, 4)}")
    print(f"cpu plain|{spread(cpu_plain, 4)}", flush=True)
    print(f"rss plain|{rss_megabytes(args.plain_pid):.1f}|-|-", flush=True)


def bed(args, jukebox, mpc, offset, now_frame):
    mpc("clear")
    mpc("add", "music.wav")
    mpc("volume", "100")
    # What the bed adds to the music's delay: `mpc play` to its first sound, each way.
    delay = {"rig": [], "bed": []}
    for _ in range(args.runs):
        for output in ("rig", "bed"):
            mpc("stop")
            mpc("enable", "only", output)
            time.sleep(1.5)
            started = time.monotonic()
            mpc("play")
            heard = first_window(args.capture, int((started + offset) * RATE), 200, lambda a: a > 0.05)
            delay[output].append(((heard / RATE) - offset - started) * 1000)
            time.sleep(1)
    mpc("stop")
    print(f"bed delay mpd|{spread(delay['rig'])}")
    print(f"bed delay bed|{spread(delay['bed'])}", flush=True)

    def cpu_over(seconds, *pids):
        before = [cpu_seconds(pid) for pid in pids]
        time.sleep(seconds)
        return [cpu_seconds(pid) - b for pid, b in zip(pids, before)]

    # CPU over 10 s: the bed with nothing coming in; MPD to the rig; MPD into the bed, played.
    silent = [cpu_over(10, args.jukeboxd_pid)[0] for _ in range(args.runs)]
    mpc("enable", "only", "rig")
    mpc("play")
    time.sleep(2)
    direct = [cpu_over(10, args.mpd_pid)[0] for _ in range(args.runs)]
    mpc("stop")
    mpc("enable", "only", "bed")
    mpc("play")
    time.sleep(2)
    through = [cpu_over(10, args.jukeboxd_pid, args.mpd_pid) for _ in range(args.runs)]
    print(f"bed cpu silent|{spread(silent, 4)}")
    print(f"bed cpu mpd rig|{spread(direct, 4)}")
    print(f"bed cpu jukeboxd|{spread([t[0] for t in through], 4)}")
    print(f"bed cpu mpd fifo|{spread([t[1] for t in through], 4)}", flush=True)

    # A 2 s clip over the music: when the music is down and back, and jukeboxd's CPU over the
    # 10 s that hold it.
    leads, releases, cpu_clip = [], [], []
    for _ in range(args.runs):
        lead, release, cpu = clip_over_music(args, offset, now_frame, lambda: jukebox("play", "bell2"), hold=10)
        leads.append(lead)
        releases.append(release)
        cpu_clip.append(cpu)
    mpc("stop")
    print(f"bed duck lead|{spread(leads)}")
    print(f"bed duck release|{spread(releases)}")
    print(f"bed cpu clip|{spread(cpu_clip, 4)}", flush=True)
    print(f"rss bed|{rss_megabytes(args.jukeboxd_pid):.1f}|-|-", flush=True)


def rss_megabytes(pid):
    """The process's resident memory now (VmRSS), in MB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    sys.exit(main())
