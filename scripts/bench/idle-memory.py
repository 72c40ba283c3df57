#!/usr/bin/env python3
"""Idle memory of jukeboxd with the web remote off and on, and with MQTT on (connected to a
mosquitto the script starts, when it is installed): resident memory (VmRSS) and anonymous
memory (smaps_rollup) two seconds after it is ready, median of RUNS starts each.

Usage: idle-memory.py --bin DIR [--bin DIR …] [--runs N]   (one column per binary folder)
"""
import argparse, os, shutil, socket, statistics, struct, subprocess, sys, tempfile, time

def wav(path):
    frames = 8000
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
        out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))

def measure(binary, work, mode):
    session = "m.json" if mode == "mqtt" else "s.json"
    args = [os.path.join(binary, "jukeboxd"), os.path.join(work, session), "--socket", os.path.join(work, "c.sock"),
            "--state", os.path.join(work, "state.json"), "--device", "null"]
    if mode == "http":
        args += ["--http", "127.0.0.1:0"]
    daemon = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        wanted = {"http": "web remote listening", "mqtt": "MQTT connected"}.get(mode, "control socket listening")
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
        broker = None
        if os.access("/usr/sbin/mosquitto", os.X_OK):
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
            probe.close()
            with open(os.path.join(work, "mosquitto.conf"), "w") as out:
                out.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n" + ("user root\n" if os.getuid() == 0 else ""))
            broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", os.path.join(work, "mosquitto.conf")], stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            with open(os.path.join(work, "m.json"), "w") as out:
                out.write('{ "interval": { "min": "1h", "max": "1h" }, "mqtt": { "broker": "mqtt://127.0.0.1:%d" }, "clips": [ { "file": "a.wav" } ] }' % port)
        for binary in args.bin:
            for mode in ("off", "http", "mqtt"):
                if mode == "mqtt" and broker is None:
                    print("mosquitto is not installed: no MQTT figure")
                    continue
                samples = [measure(binary, work, mode) for _ in range(args.runs)]
                if None in samples:
                    continue
                rss = statistics.median(s[0] for s in samples) / 1024
                anonymous = statistics.median(s[1] for s in samples) / 1024
                label = {"off": "http off", "http": "http on (HTTPS, the default)", "mqtt": "mqtt on"}[mode]
                print(f"{binary}: {label}: RSS {rss:.1f} MB, anonymous {anonymous:.1f} MB")
        if broker:
            broker.terminate()
            broker.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
