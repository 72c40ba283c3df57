#!/usr/bin/python3
"""The cost of HTTPS in BENCHMARKS.md, plain HTTP beside it, on loopback:
  - the TLS handshake: its time as curl sees it (TCP connected to TLS done, median of N new
    connections) and the daemon's own CPU per handshake (utime + stime over N handshakes);
  - the page's load in headless Chromium, trusting the daemon's authority through an NSS
    database: DOMContentLoaded and first paint, median of 10 loads, each a new browser
    session so each pays a handshake (cold); and the same page loaded again 10 times in one
    browser, as a phone that has the remote open does and as scripts/bench/web.py measures
    plain HTTP (warm: DOMContentLoaded and first contentful paint);
  - idle memory: resident (VmRSS) and anonymous (smaps_rollup) two seconds after ready, with
    the web remote off, on over plain HTTP, and on over HTTPS (medians of RUNS starts).

Usage: /usr/bin/python3 https.py --bin DIR [--handshakes N] [--runs N]   (Debian's python3, with python3-selenium)
"""
import argparse, json, os, shutil, statistics, struct, subprocess, sys, tempfile, time
from pageload import READY, chromium, loads_in_one_browser

def wav(path):
    frames = 8000
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
        out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))

class Daemon:
    """jukeboxd with the web remote `mode`: "off", "http" or "https"."""
    def __init__(self, binary, work, mode):
        self.work, self.mode = work, mode
        session = {"interval": {"min": "1h", "max": "1h"}, "clips": [{"file": "a.wav"}]}
        if mode != "off":
            session["http"] = {"listen": "127.0.0.1:0", "passwordFile": "pw", "https": mode == "https"}
        with open(os.path.join(work, f"{mode}.json"), "w") as out:
            json.dump(session, out)
        self.process = subprocess.Popen([os.path.join(binary, "jukeboxd"), os.path.join(work, f"{mode}.json"), "--socket", os.path.join(work, f"{mode}.sock"),
                                         "--state", os.path.join(work, f"{mode}-state.json"), "--device", "null"], stderr=subprocess.PIPE, text=True)
        wanted = "web remote listening on" if mode != "off" else "control socket listening"
        self.port = None
        for line in self.process.stderr:
            if wanted in line:
                if mode != "off":
                    self.port = int(line.rsplit("(port ", 1)[1].rstrip(")\n"))
                break
        self.authority = os.path.join(work, f"{mode}-state.tls", "ca.crt")
        self.base = f"{mode}://127.0.0.1:{self.port}"

    def cpu_seconds(self):
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self):
        status = open(f"/proc/{self.process.pid}/status").read()
        rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])
        rollup = open(f"/proc/{self.process.pid}/smaps_rollup").read()
        anonymous = int(next(line for line in rollup.splitlines() if line.startswith("Anonymous:")).split()[1])
        return rss / 1024, anonymous / 1024

    def stop(self):
        self.process.terminate()
        self.process.wait()

def handshakes(daemon, count):
    """Median TLS handshake as curl times it, and the daemon's CPU per handshake."""
    times = []
    before = daemon.cpu_seconds()
    for _ in range(count):
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "--cacert", daemon.authority, "-w", "%{time_connect} %{time_appconnect}", daemon.base + "/icon.svg"],
                             capture_output=True, text=True, check=True).stdout.split()
        times.append((float(out[1]) - float(out[0])) * 1000)
    cpu = (daemon.cpu_seconds() - before) / count * 1000
    return statistics.median(times), cpu

def page_loads(daemon, loads=10):
    """(cold DOMContentLoaded, cold first paint, warm DOMContentLoaded, warm first contentful paint), medians in ms."""
    home = tempfile.mkdtemp(prefix="bench-home-")
    previous = os.environ.get("HOME")
    try:
        if daemon.mode == "https":
            nssdb = "sql:" + os.path.join(home, ".pki", "nssdb")
            os.makedirs(os.path.join(home, ".pki", "nssdb"))
            subprocess.run(["certutil", "-d", nssdb, "-N", "--empty-password"], check=True, capture_output=True)
            subprocess.run(["certutil", "-d", nssdb, "-A", "-t", "C,,", "-n", "jukeboxd", "-i", daemon.authority], check=True, capture_output=True)
        os.environ["HOME"] = home
        ready, paint = [], []
        for _ in range(loads + 1):
            browser = chromium()
            try:
                browser.get(daemon.base + "/")
                time.sleep(0.2)
                ready.append(browser.execute_script(READY))
                paint.append(browser.execute_script("const p = performance.getEntriesByName('first-paint')[0]; return p ? p.startTime : -1;"))
            finally:
                browser.quit()
        # The first cold load warms Chromium's own caches (of the binary, not of the page).
        return (statistics.median(ready[1:]), statistics.median(paint[1:])) + loads_in_one_browser(daemon.base, loads)
    finally:
        if previous is not None:
            os.environ["HOME"] = previous
        shutil.rmtree(home, ignore_errors=True)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--handshakes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-https-")
    try:
        wav(os.path.join(work, "a.wav"))
        with open(os.path.join(work, "pw"), "w") as out:
            out.write("bench\n")
        memory = {}
        for mode in ("off", "http", "https"):
            samples = []
            for _ in range(args.runs):
                daemon = Daemon(args.bin, work, mode)
                time.sleep(2)
                samples.append(daemon.memory())
                daemon.stop()
            memory[mode] = (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))
        secure = Daemon(args.bin, work, "https")
        plain = Daemon(args.bin, work, "http")
        try:
            handshake, cpu = handshakes(secure, args.handshakes)
            # The same requests over plain HTTP: what a new connection costs without TLS.
            plain_cpu_before = plain.cpu_seconds()
            for _ in range(args.handshakes):
                subprocess.run(["curl", "-s", "-o", "/dev/null", plain.base + "/icon.svg"], check=True)
            plain_cpu = (plain.cpu_seconds() - plain_cpu_before) / args.handshakes * 1000
            secure_load = page_loads(secure)
            plain_load = page_loads(plain)
        finally:
            secure.stop()
            plain.stop()
        print(f"| TLS handshake, as curl times it (median of {args.handshakes} new connections) | {handshake:.2f} ms | | |")
        print(f"| the daemon's CPU per new connection and request | HTTPS {cpu:.2f} ms | HTTP {plain_cpu:.2f} ms | |")
        print(f"| page load, DOMContentLoaded (headless Chromium, median of 10 new sessions) | HTTPS {secure_load[0]:.1f} ms | HTTP {plain_load[0]:.1f} ms | ≤ 150 ms: {'met' if secure_load[0] <= 150 else 'not met'} |")
        print(f"| page load, first paint | HTTPS {secure_load[1]:.1f} ms | HTTP {plain_load[1]:.1f} ms | |")
        print(f"| page loaded again in one browser, DOMContentLoaded (median of 10) | HTTPS {secure_load[2]:.1f} ms | HTTP {plain_load[2]:.1f} ms | ≤ 150 ms: {'met' if secure_load[2] <= 150 else 'not met'} |")
        print(f"| page loaded again, first contentful paint | HTTPS {secure_load[3]:.1f} ms | HTTP {plain_load[3]:.1f} ms | ≤ 300 ms: {'met' if secure_load[3] <= 300 else 'not met'} |")
        print(f"| idle RSS (median of {args.runs} starts) | HTTPS {memory['https'][0]:.1f} MB | HTTP {memory['http'][0]:.1f} MB, off {memory['off'][0]:.1f} MB | |")
        print(f"| idle anonymous memory | HTTPS {memory['https'][1]:.1f} MB | HTTP {memory['http'][1]:.1f} MB, off {memory['off'][1]:.1f} MB | |")
    finally:
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
