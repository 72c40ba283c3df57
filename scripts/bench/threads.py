#!/usr/bin/env python3
"""Where a player's CPU goes while it plays a clip: CPU time (schedstat) and wake-ups
(context switches) of each of its threads, by thread name, over one play.

  threads.py --pid PID --seconds 10.8 -- COMMAND…

Runs COMMAND (`jukebox play ten`, `mpc play`), which must return at once, and reads
/proc/PID/task/* just before it and SECONDS later. Threads that come and go meanwhile (a pool
thread) are read twice a second, so their share is counted too. Prints one line per thread
name: CPU ms, wake-ups, and how many threads had that name.
"""
import argparse, os, subprocess, time
from collections import defaultdict


def tasks(pid):
    found = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{task}/comm").read().strip()
            cpu = int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
            switches = sum(int(line.split()[1]) for line in open(f"/proc/{pid}/task/{task}/status")
                           if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
            found[task] = (name, cpu, switches)
        except OSError:
            pass
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=10.8)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    first = tasks(args.pid)
    last = dict(first)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
        last.update(tasks(args.pid))
    cpu, woke, count = defaultdict(int), defaultdict(int), defaultdict(int)
    for task, (name, used, switches) in last.items():
        _, used0, switches0 = first.get(task, (name, 0, 0))
        if used == used0 and switches == switches0:
            continue
        cpu[name] += used - used0
        woke[name] += switches - switches0
        count[name] += 1
    for name in sorted(cpu, key=lambda n: -cpu[n]):
        print(f"{name:20} {cpu[name] / 1e6:7.2f} ms {woke[name]:6d} wake-ups  ({count[name]} thread{'s' if count[name] > 1 else ''})")
    print(f"{'total':20} {sum(cpu.values()) / 1e6:7.2f} ms {sum(woke.values()):6d} wake-ups")


if __name__ == "__main__":
    main()
