#!/usr/bin/python3
"""The web remote's figures in BENCHMARKS.md: `POST /rpc` `status` over keep-alive with wrk
(p50, p99, requests per second with 32 connections) beside the same request over the control
socket, and the page's load time (DOMContentLoaded in headless Chromium), on loopback, over
plain HTTP (scripts/bench/https.py measures what HTTPS adds).

Usage: /usr/bin/python3 web.py --bin DIR [--seconds N]   (Debian's python3, which has python3-selenium)
"""
import argparse, json, os, shutil, socket, struct, subprocess, sys, tempfile, time
from pageload import loads_in_one_browser

def wav(path):
    frames = 8000
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
        out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-web-")
    daemon = None
    try:
        wav(os.path.join(work, "a.wav"))
        with open(os.path.join(work, "pw"), "w") as out:
            out.write("bench\n")
        with open(os.path.join(work, "s.json"), "w") as out:
            json.dump({"interval": {"min": "1h", "max": "1h"}, "http": {"listen": "127.0.0.1:0", "passwordFile": "pw", "https": False}, "clips": [{"file": "a.wav"}]}, out)
        sock = os.path.join(work, "c.sock")
        daemon = subprocess.Popen([os.path.join(args.bin, "jukeboxd"), os.path.join(work, "s.json"), "--socket", sock,
                                   "--state", os.path.join(work, "state.json"), "--device", "null"], stderr=subprocess.PIPE, text=True)
        port = None
        for line in daemon.stderr:
            if "web remote listening on" in line:
                port = int(line.rsplit("(port ", 1)[1].rstrip(")\n"))
                break
        base = f"http://127.0.0.1:{port}"
        script = os.path.join(work, "rpc.lua")
        with open(script, "w") as out:
            out.write('wrk.method = "POST"\nwrk.body = \'{"jsonrpc":"2.0","id":1,"method":"status"}\'\n'
                      'wrk.headers["Authorization"] = "Bearer bench"\nwrk.headers["Content-Type"] = "application/json"\n'
                      'done = function(summary, latency, requests)\n'
                      '  io.write(string.format("RESULT %f %f %f\\n", latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests / (summary.duration / 1e6)))\n'
                      'end\n')
        figures = {}
        for connections in (1, 32):
            out = subprocess.run(["wrk", "-t", "2" if connections > 1 else "1", "-c", str(connections), "-d", f"{args.seconds}s", "-s", script, base + "/rpc"],
                                 capture_output=True, text=True, check=True).stdout
            p50, p99, rate = map(float, out.split("RESULT ")[1].split())
            figures[connections] = (p50, p99, rate)
        # The same request over the control socket, one connection, one at a time.
        client = socket.socket(socket.AF_UNIX)
        client.connect(sock)
        reader = client.makefile("rb")
        samples = []
        for _ in range(2000):
            start = time.perf_counter()
            client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
            reader.readline()
            samples.append((time.perf_counter() - start) * 1000)
        samples.sort()
        socket_p50, socket_p99 = samples[len(samples) // 2], samples[int(len(samples) * 0.99)]
        # The page in headless Chromium at phone size: DOMContentLoaded and first contentful
        # paint, median of 10 loads (the first, which fills the caches, is left out).
        load, paint = loads_in_one_browser(base)
        print(f"| `POST /rpc` `status`, 1 keep-alive connection (wrk) | p50 {figures[1][0]:.2f} ms, p99 {figures[1][1]:.2f} ms | socket p50 {socket_p50:.2f} ms, p99 {socket_p99:.2f} ms | p50 ≤ 1 ms | {'met' if figures[1][0] <= 1 else 'not met'} |")
        print(f"| `POST /rpc` `status`, 32 connections (wrk) | {figures[32][2]:.0f} requests/s, p50 {figures[32][0]:.2f} ms, p99 {figures[32][1]:.2f} ms | | | |")
        print(f"| page load (DOMContentLoaded, headless Chromium at 390 × 844, median of 10) | {load:.1f} ms | | ≤ 150 ms | {'met' if load <= 150 else 'not met'} |")
        print(f"| first contentful paint (the same loads) | {paint:.1f} ms | | ≤ 300 ms | {'met' if paint <= 300 else 'not met'} |")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
