#!/usr/bin/env python3
"""Command-to-sound figures for the home-automation front ends, on the paced PulseAudio rig
(scripts/pulse-rig.sh), side by side in one run:

  play   `jukebox play tone` (the CLI over the control socket)
  mqtt   `mosquitto_pub … command/play -m tone` to a mosquitto the script starts
  cold   `jukebox say TEXT` with a text never said before (espeak-ng makes it)
  cached `jukebox say "Dinner is ready"`, already in the announcements cache

Each figure is the time from starting the command to the first sample above -26 dBFS in the
null sink's monitor capture, with the device idle but open (a second after the clip before).
The wall clock is mapped onto the capture once: parecord appends in chunks, so the largest
(frames - clock) offset seen over 0.4 s of polling is taken. The kinds are interleaved, RUNS
of each, and the median, minimum and maximum are printed.

Usage: announce.py --bin DIR [--runs 15]      (needs pulseaudio, mosquitto, espeak-ng)
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

from soundclock import clock_offset, free_port, onset, tone

RATE = 44_100
HERE = os.path.dirname(os.path.abspath(__file__))
RIG = os.path.join(HERE, "..", "pulse-rig.sh")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    for program in ["pulseaudio", "parecord", "mosquitto", "mosquitto_pub", "espeak-ng"]:
        if not shutil.which(program) and not os.access(f"/usr/sbin/{program}", os.X_OK):
            sys.exit(f"announce.py: {program} is not installed")
    work = tempfile.mkdtemp(prefix="jukebox-announce-")
    rig = os.path.join(work, "rig")
    capture = os.path.join(work, "capture.raw")
    daemon = broker = None
    try:
        tone(os.path.join(work, "tone.wav"), RATE, 0.3, amplitude=16000)
        port = free_port()
        with open(os.path.join(work, "mosquitto.conf"), "w") as out:
            out.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n" + ("user root\n" if os.getuid() == 0 else ""))
        broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", os.path.join(work, "mosquitto.conf")], stderr=subprocess.DEVNULL)
        with open(os.path.join(work, "bench.json"), "w") as out:
            json.dump({"device": "pulse", "interval": {"min": "1h", "max": "1h"}, "mqtt": {"broker": f"mqtt://127.0.0.1:{port}", "discovery": False},
                       "clips": [{"file": "tone.wav"}]}, out)
        printed = subprocess.run([RIG, "start", rig], check=True, capture_output=True, text=True).stdout
        env = dict(os.environ, **dict(line.split("=", 1) for line in printed.split() if "=" in line))
        socket_path = os.path.join(work, "c.sock")
        daemon = subprocess.Popen(
            [os.path.join(args.bin, "jukeboxd"), os.path.join(work, "bench.json"), "--socket", socket_path, "--state", os.path.join(work, "state.json")],
            env=env, stderr=subprocess.PIPE, text=True)
        connected = False
        for line in daemon.stderr:
            if "MQTT connected" in line:
                connected = True
                break
        if not connected:
            sys.exit("announce.py: jukeboxd did not connect to the broker")
        # The rest of its log is drained so it never blocks on a full pipe.
        subprocess.Popen(["cat"], stdin=daemon.stderr, stdout=subprocess.DEVNULL)
        jukebox = [os.path.join(args.bin, "jukebox"), "--socket", socket_path]

        def idle():
            while '"playing":{' in subprocess.run(jukebox + ["--json", "status"], capture_output=True, text=True).stdout:
                time.sleep(0.05)

        subprocess.run([RIG, "capture", rig, capture], check=True, env=env)
        # Warm up: the device opened, the cache holding the cached text.
        subprocess.run(jukebox + ["say", "Dinner is ready"], check=True, capture_output=True)
        idle()
        offset = clock_offset(capture, RATE)
        commands = {
            "play": lambda n: jukebox + ["play", "tone"],
            "mqtt": lambda n: ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", "jukeboxd/bench/command/play", "-m", "tone"],
            "cold": lambda n: jukebox + ["say", f"Announcement number {n} of this run, {time.time_ns()}"],
            "cached": lambda n: jukebox + ["say", "Dinner is ready"],
        }
        results = {kind: [] for kind in commands}
        for n in range(args.runs):
            for kind, command in commands.items():
                idle()
                time.sleep(1)  # idle but open: keepDeviceOpen closes it after 5 s
                started = time.monotonic()
                subprocess.Popen(command(n), stdout=subprocess.DEVNULL).wait()
                heard = onset(capture, int((started + offset) * RATE), RATE)
                if heard is None:
                    sys.exit(f"announce.py: no sound after {kind}")
                results[kind].append((heard - (started + offset)) * 1000)
        subprocess.run([RIG, "stop-capture", rig], env=env)
        names = {"play": "`jukebox play` → sound", "mqtt": "MQTT `play` published → sound", "cold": "`jukebox say` → sound, not cached (espeak-ng)",
                 "cached": "`jukebox say` → sound, cached"}
        for kind, values in results.items():
            print(f"{names[kind]}|{statistics.median(values):.1f}|{min(values):.1f}|{max(values):.1f}|{len(values)}")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        if broker:
            broker.terminate()
            broker.wait()
        subprocess.run([RIG, "stop", rig], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
