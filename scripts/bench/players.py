#!/usr/bin/env python3
"""jukeboxd, aplay and MPD side by side on the paced PulseAudio rig (scripts/pulse-rig.sh), in
one run, measured as a person experiences them and as the kernel accounts for them:

  cpu      CPU to play a 10 s 44.1 kHz stereo WAV. aplay: its own user + system time from the
           kernel's rusage of the child (wait4), with no wrapper. jukeboxd and MPD: the sum over
           /proc/PID/task/*/schedstat from just after the command returns until the clip has
           played, with nothing polling them meanwhile.
  onset    from starting the command (`jukebox play`, `aplay`, `mpc play`) to the first sample
           above -26 dBFS in the null sink's monitor capture; jukeboxd with its device closed
           and idle but open (a second after the clip before). The wall clock is mapped onto the
           capture once (soundclock.clock_offset).
  volume   from starting `jukebox volume 20` while ten.wav plays at full volume to the first
           10 ms of the capture whose peak is under three quarters of the tone's: what the device
           holds when the command comes is taken back where the device allows it, else heard
           first. (MPD runs without a mixer here, as the rig's output has none.)
  memory   resident (VmRSS) and private (Private_Clean + Private_Dirty, smaps_rollup) memory
           of jukeboxd and MPD after playing.
  wakeups  context switches per minute (voluntary + involuntary, every thread) of each daemon
           while idle, over 60 s, starting 30 s after the last play (once jukeboxd has closed
           its device, swept its idle connections, and idle pool threads have ended).

Prints `name|median|min|max` lines for scripts/bench-compare.sh, which starts the rig, the
capture, jukeboxd (playing ten.wav and a.wav from MUSIC) and MPD (on MUSIC) first.

Usage: players.py --bin DIR --jukeboxd-pid PID --mpd-pid PID --socket PATH --music DIR
                  --capture FILE [--mpd-port 6611] [--runs 15]
"""
import argparse, os, statistics, subprocess, sys, time

from soundclock import clock_offset, cpu_seconds, onset, quieter

RATE = 44_100


def switches(pid):
    """Context switches so far of each thread of the process, by thread id."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            counts[task] = sum(int(line.split()[1]) for line in open(f"/proc/{pid}/task/{task}/status")
                               if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass
    return counts


def wakeups(pids, seconds):
    """Context switches of every thread over `seconds`, for each pid. Threads come and go (a
    thread pool lets idle threads end), so each is followed by its id, sampled twice a second:
    a thread's switches from its first sample (or its start, if it starts meanwhile) to its last."""
    first = {pid: switches(pid) for pid in pids}
    last = {pid: dict(counts) for pid, counts in first.items()}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
        for pid in pids:
            last[pid].update(switches(pid))
    return {pid: sum(count - first[pid].get(task, 0) for task, count in last[pid].items()) for pid in pids}


def memory(pid):
    rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
    private = sum(int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.startswith(("Private_Clean:", "Private_Dirty:")))
    return rss / 1024, private / 1024


def spread(values, digits=1):
    return f"{statistics.median(values):.{digits}f}|{min(values):.{digits}f}|{max(values):.{digits}f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--jukeboxd-pid", type=int, required=True)
    parser.add_argument("--mpd-pid", type=int, required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--mpd-port", default="6611")
    parser.add_argument("--music", required=True)
    parser.add_argument("--capture", required=True)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", choices=["wakeups"], help="measure only this")
    args = parser.parse_args()
    if args.only == "wakeups":
        woke = wakeups([args.jukeboxd_pid, args.mpd_pid], 60)
        print(f"wakeups|{woke[args.jukeboxd_pid]}|{woke[args.mpd_pid]}", flush=True)
        return
    jukebox = [os.path.join(args.bin, "jukebox"), "--socket", args.socket]
    mpc = ["mpc", "-q", "-p", args.mpd_port]
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def jukebox_idle():
        while '"playing":{' in subprocess.run(jukebox + ["--json", "status"], capture_output=True, text=True).stdout:
            time.sleep(0.05)

    def mpd_stopped():
        while "[playing]" in subprocess.run(["mpc", "-p", args.mpd_port, "status"], capture_output=True, text=True).stdout:
            time.sleep(0.05)

    # CPU to play 10 s.
    cpu = {"aplay": [], "jukeboxd": [], "mpd": []}
    for _ in range(max(3, args.runs // 3)):
        child = subprocess.Popen(["aplay", "-q", "-D", "pulse", os.path.join(args.music, "ten.wav")], **quiet)
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0
        cpu["aplay"].append(usage.ru_utime + usage.ru_stime)
        subprocess.run(jukebox + ["play", "ten"], check=True, **quiet)
        before = cpu_seconds(args.jukeboxd_pid)
        time.sleep(10.8)
        cpu["jukeboxd"].append(cpu_seconds(args.jukeboxd_pid) - before)
        jukebox_idle()
        subprocess.run(mpc + ["clear"], check=True)
        subprocess.run(mpc + ["add", "ten.wav"], check=True)
        subprocess.run(mpc + ["play"], check=True)
        before = cpu_seconds(args.mpd_pid)
        time.sleep(10.8)
        cpu["mpd"].append(cpu_seconds(args.mpd_pid) - before)
        mpd_stopped()
    for name, values in cpu.items():
        print(f"cpu {name}|{spread(values, 4)}", flush=True)

    rss_j, private_j = memory(args.jukeboxd_pid)
    rss_m, private_m = memory(args.mpd_pid)
    print(f"memory jukeboxd|{rss_j:.1f}|{private_j:.1f}")
    print(f"memory mpd|{rss_m:.1f}|{private_m:.1f}", flush=True)

    # Onset, in the capture.
    offset = clock_offset(args.capture, RATE)
    onsets = {"jukeboxd closed": [], "jukeboxd open": [], "aplay": [], "mpd": []}

    def timed(kind, command):
        started = time.monotonic()
        child = subprocess.Popen(command, **quiet)
        if kind != "aplay":
            child.wait()  # the daemons answer at once; aplay plays until the clip ends
        heard = onset(args.capture, int((started + offset) * RATE), RATE)
        if heard is None:
            sys.exit(f"players.py: no sound after {kind}")
        onsets[kind].append((heard - offset - started) * 1000)
        child.wait()
        time.sleep(1.3)  # the 1 s clip ends before the next command

    for _ in range(args.runs):
        time.sleep(6)  # jukeboxd closes its device after 5 s idle
        timed("jukeboxd closed", jukebox + ["play", "a"])
        jukebox_idle()
        timed("jukeboxd open", jukebox + ["play", "a"])
        jukebox_idle()
        timed("aplay", ["aplay", "-q", "-D", "pulse", os.path.join(args.music, "a.wav")])
        subprocess.run(mpc + ["clear"], check=True)
        subprocess.run(mpc + ["add", "a.wav"], check=True)
        timed("mpd", mpc + ["play"])
        mpd_stopped()
    for name, values in onsets.items():
        print(f"onset {name}|{spread(values)}", flush=True)

    # A volume change, heard: ten.wav's tone peaks at half of full scale.
    turned = []
    for _ in range(max(5, args.runs // 3)):
        subprocess.run(jukebox + ["volume", "100"], check=True, **quiet)
        subprocess.run(jukebox + ["play", "ten"], check=True, **quiet)
        heard = onset(args.capture, int((time.monotonic() + offset) * RATE), RATE)
        if heard is None:
            sys.exit("players.py: ten.wav was not heard")
        time.sleep(2.5)
        started = time.monotonic()
        subprocess.run(jukebox + ["volume", "20"], check=True, **quiet)
        softer = quieter(args.capture, int((started + offset) * RATE), RATE, below=int(0.75 * 16384))
        if softer is None:
            sys.exit("players.py: the volume change was not heard")
        turned.append((softer - offset - started) * 1000)
        subprocess.run(jukebox + ["skip"], check=True, **quiet)
        jukebox_idle()
    subprocess.run(jukebox + ["volume", "100"], check=True, **quiet)
    print(f"volume jukeboxd|{spread(turned)}", flush=True)

    # Wake-ups while idle, once settled: jukeboxd closes its device 5 s after its last clip,
    # the control socket's idle sweep runs once more 10 s after the last client, and Dispatch
    # ends a pool thread 5 s after its last work.
    time.sleep(30)
    woke = wakeups([args.jukeboxd_pid, args.mpd_pid], 60)
    print(f"wakeups|{woke[args.jukeboxd_pid]}|{woke[args.mpd_pid]}", flush=True)


if __name__ == "__main__":
    main()
