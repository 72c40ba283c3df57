#!/usr/bin/env python3
"""Snapcast figures for BENCHMARKS.md and docs/multi-room.md, in one run:

  cpu        jukeboxd's CPU to play a 10 s clip (44.1 kHz stereo, so the Snapcast output
             resamples it; and 48 kHz, so it does not) through the Snapcast output, against
             the same clip through ALSA on the paced PulseAudio rig (scripts/pulse-rig.sh)
  scale      the CPU of jukeboxd, snapserver and the snapclients together while the 10 s clip
             plays to 1, 2, 4 and 8 snapclients
  onset      command to sound in a snapclient's output, minus snapserver's buffer (RUNS plays
             of a short tone, the device idle but open between them)
  sync       the offset between two snapclients' outputs, for the same plays

A daemon's CPU is the sum over /proc/PID/task/*/schedstat, from the command to the end of the
clip, with nothing polling the daemon meanwhile. A snapclient's output is mapped onto the wall
clock as the paced rig's capture is: it is written in real time, in pieces, so the largest
(frames - clock) offset seen over 0.4 s of polling is taken.

Usage: snapcast.py --bin DIR [--runs 10]   (needs snapserver, snapclient, pulseaudio)
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

from soundclock import clock_offset, cpu_seconds, free_port, onset, tone

HERE = os.path.dirname(os.path.abspath(__file__))
RIG = os.path.join(HERE, "..", "pulse-rig.sh")
RATE = 48_000
BUFFER_MS = 400


class Daemon:
    def __init__(self, binary, work, name, session, env):
        self.socket = os.path.join(work, f"{name}.sock")
        self.log = open(os.path.join(work, f"{name}.log"), "w+")
        self.process = subprocess.Popen([os.path.join(binary, "jukeboxd"), session, "--socket", self.socket,
                                         "--state", os.path.join(work, f"{name}.state")], env=env, stderr=self.log)
        self.binary = binary
        self.wait_log("control socket listening")

    def wait_log(self, text, count=1, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.log.seek(0)
            if self.log.read().count(text) >= count:
                return
            time.sleep(0.02)
        sys.exit(f"snapcast.py: jukeboxd never logged {text!r}")

    def jukebox(self, *words):
        return subprocess.run([os.path.join(self.binary, "jukebox"), "--socket", self.socket, *words], check=True, capture_output=True, text=True).stdout

    def stop(self):
        self.process.terminate()
        self.process.wait()


class Snapcast:
    def __init__(self, work):
        self.work = work
        self.port = free_port()
        self.pipe = os.path.join(work, "fifo")
        self.conf = os.path.join(work, "snapserver.conf")
        with open(self.conf, "w") as out:
            out.write(f"[server]\nthreads = 2\ndatadir = {work}\n[http]\nenabled = false\n[tcp]\nenabled = false\n[stream]\n"
                      f"bind_to_address = 127.0.0.1\nport = {self.port}\nsource = pipe://{self.pipe}?name=jukeboxd&mode=create&sampleformat=48000:16:2&codec=pcm&chunk_ms=20\n"
                      f"buffer = {BUFFER_MS}\n[logging]\nsink = null\n")
        self.server = subprocess.Popen(["snapserver", "-c", self.conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(self.pipe):
            time.sleep(0.02)
        self.clients = {}

    def add_client(self, name):
        output = os.path.join(self.work, f"{name}.raw")
        log = os.path.join(self.work, f"{name}.client.log")
        process = subprocess.Popen(["snapclient", "-h", "127.0.0.1", "-p", str(self.port), "--hostID", name, "--logsink", f"file:{log}",
                                    "--player", f"file:filename={output},mode=a"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.path.exists(log) and "Sampleformat" in open(log).read():
                break
            time.sleep(0.05)
        self.clients[name] = (process, output)

    def remove_clients(self):
        for process, _ in self.clients.values():
            process.terminate()
            process.wait()
        self.clients = {}

    def stop(self):
        self.remove_clients()
        self.server.terminate()
        self.server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-snapcast-")
    rig = os.path.join(work, "rig")
    daemons, snap = [], None
    try:
        tone(os.path.join(work, "ten44.wav"), 44_100, 10)
        tone(os.path.join(work, "ten48.wav"), 48_000, 10)
        tone(os.path.join(work, "tone.wav"), 48_000, 0.3)
        clips = [{"file": "ten44.wav"}, {"file": "ten48.wav"}, {"file": "tone.wav"}]
        printed = subprocess.run([RIG, "start", rig], check=True, capture_output=True, text=True).stdout
        env = dict(os.environ, **dict(line.split("=", 1) for line in printed.split() if "=" in line))
        snap = Snapcast(work)
        for name, output in [("alsa", {"type": "alsa", "device": "pulse"}), ("snapcast", {"type": "snapcast", "pipe": snap.pipe})]:
            with open(os.path.join(work, f"{name}.json"), "w") as out:
                json.dump({"interval": {"min": "1h", "max": "1h"}, "output": output, "clips": clips}, out)
        alsa = Daemon(args.bin, work, "alsa", os.path.join(work, "alsa.json"), env)
        snapd = Daemon(args.bin, work, "snapcast", os.path.join(work, "snapcast.json"), env)
        daemons = [alsa, snapd]
        snap.add_client("room1")

        def play_cpu(daemon, clip, extra=()):
            count = open(daemon.log.name).read().count(f"played {clip}")
            pids = [daemon.process.pid] + list(extra)
            before = [cpu_seconds(pid) for pid in pids]
            daemon.jukebox("play", clip)
            daemon.wait_log(f"played {clip}", count + 1)
            time.sleep(0.5)  # the tail: ALSA drains, snapserver reads the pipe's last 100 ms
            return [cpu_seconds(pid) - b for pid, b in zip(pids, before)]

        print("## cpu")
        for daemon, clip in [(alsa, "ten44"), (snapd, "ten44"), (alsa, "ten48"), (snapd, "ten48")]:
            runs = [play_cpu(daemon, clip)[0] for _ in range(3)]
            print(f"{'ALSA (pulse)' if daemon is alsa else 'Snapcast'}|{clip}|{statistics.median(runs):.4f}|{min(runs):.4f}|{max(runs):.4f}")

        print("## scale")
        for count in [1, 2, 4, 8]:
            snap.remove_clients()
            for index in range(count):
                snap.add_client(f"scale{count}-{index}")
            clients = [process.pid for process, _ in snap.clients.values()]
            used = play_cpu(snapd, "ten48", [snap.server.pid] + clients)
            print(f"{count}|{used[0]:.4f}|{used[1]:.4f}|{sum(used[2:]):.4f}|{sum(used[2:]) / count:.4f}")

        print("## onset and sync")
        snap.remove_clients()
        snap.add_client("kitchen")
        snap.add_client("workshop")
        outputs = {name: output for name, (_, output) in snap.clients.items()}
        offsets = {name: clock_offset(path, RATE) for name, path in outputs.items()}
        onsets, syncs = [], []
        for _ in range(args.runs):
            time.sleep(1)
            started = time.monotonic()
            snapd.jukebox("play", "tone")
            heard = {name: onset(path, int((started + offsets[name]) * RATE), RATE) for name, path in outputs.items()}
            if None in heard.values():
                sys.exit("snapcast.py: a room heard nothing")
            walls = {name: heard[name] - offsets[name] for name in heard}
            onsets.append((walls["kitchen"] - started) * 1000 - BUFFER_MS)
            syncs.append((walls["kitchen"] - walls["workshop"]) * 1000)
            snapd.wait_log("played tone", len(onsets))
        print(f"onset|{statistics.median(onsets):.1f}|{min(onsets):.1f}|{max(onsets):.1f}|{BUFFER_MS}")
        print(f"sync|{statistics.median(syncs):.2f}|{min(syncs):.2f}|{max(syncs):.2f}")
    finally:
        for daemon in daemons:
            daemon.stop()
        if snap:
            snap.stop()
        subprocess.run([RIG, "stop", rig], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
