#!/usr/bin/env python3
"""What a hostile or broken client or file costs a jukeboxd build: memory, descriptors, time.

  abuse.py --bin .build/release [--clips clips]

Prints one line per figure. Run it against two builds to compare them; each attack is
bounded in count and time and talks only to a daemon it started on this machine.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def connect(path):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(60)
    client.connect(path)
    return client


def call(path, request):
    with connect(path) as client:
        client.sendall(json.dumps(request).encode() + b"\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = client.recv(1 << 20)
            if not chunk:
                break
            reply += chunk
        return reply


class Daemon:
    def __init__(self, binary, work, session, extra=()):
        self.path = os.path.join(work, "c.sock")
        os.makedirs(os.path.join(work, "state"), mode=0o700, exist_ok=True)
        self.process = subprocess.Popen(
            [binary, session, "--socket", self.path, "--state", os.path.join(work, "state", "s.json"), "--device", "null",
             "--log-level", "error", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            if os.path.exists(self.path):
                try:
                    call(self.path, {"jsonrpc": "2.0", "id": 0, "method": "status"})
                    break
                except OSError:
                    pass
            time.sleep(0.05)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def settle(pid, seconds):
    """The resident size after `seconds`: long enough for a daemon to act on what it was sent."""
    time.sleep(seconds)
    return rss_kb(pid)


PAUSE = {"jsonrpc": "2.0", "id": 1, "method": "pause"}
CLEAR = {"jsonrpc": "2.0", "id": 2, "method": "clear"}
ENQUEUE = {"jsonrpc": "2.0", "id": 1, "method": "enqueue", "params": {"clips": ["a"] * 9000}}


def paused(binary, work, session):
    """A daemon of its own, paused, so what is queued stays queued."""
    daemon = Daemon(binary, work, session)
    call(daemon.path, PAUSE)
    return daemon


def storm_then_clear(binary, work, session):
    daemon = paused(binary, work, session)
    idle = settle(daemon.process.pid, 2)
    call(daemon.path, ENQUEUE)
    full = rss_kb(daemon.process.pid)
    call(daemon.path, CLEAR)
    cleared = settle(daemon.process.pid, 10)
    print(f"8  enqueue 9 000 then clear: idle {idle} kB, full {full} kB, 10 s after clear {cleared} kB ({cleared / idle:.2f} x idle)")
    daemon.stop()


def unread_replies(binary, work, session):
    daemon = paused(binary, work, session)
    call(daemon.path, ENQUEUE)
    before = rss_kb(daemon.process.pid)
    silent = connect(daemon.path)
    silent.sendall(b'{"jsonrpc":"2.0","id":1,"method":"queue"}\n' * 1000)
    after = settle(daemon.process.pid, 5)
    print(f"4  1 000 unread queue replies (9 000 waiting): {before} kB -> {after} kB resident after 5 s")
    silent.close()
    daemon.stop()


def rounds(binary, work, session):
    daemon = paused(binary, work, session)
    start = settle(daemon.process.pid, 2)
    for _ in range(100):
        call(daemon.path, ENQUEUE)
        call(daemon.path, CLEAR)
    end = settle(daemon.process.pid, 2)
    print(f"6  100 rounds of enqueue 9 000 + clear, paused: {start} kB -> {end} kB ({(end - start) / 1024:+.1f} MB)")
    daemon.stop()


def client_names(binary, work, session):
    daemon = paused(binary, work, session)
    name = "x" * 63_000
    replies = [call(daemon.path, {"jsonrpc": "2.0", "id": 3, "method": "enqueue", "params": {"clips": ["a"], "client": name}}) for _ in range(10)]
    refused = sum(b"invalid-params" in reply for reply in replies)
    state_size = os.path.getsize(os.path.join(work, "state", "s.json"))
    print(f"5  10 enqueues with a 63 000-character client name: {refused} refused, state file {state_size} bytes")
    call(daemon.path, CLEAR)
    daemon.stop()


def idle_connections(binary, work, session):
    # This process needs more descriptors than the daemon it attacks.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    path = os.path.join(work, "c.sock")
    shell = ["/bin/sh", "-c", 'ulimit -n 1024 && exec "$0" "$@"', binary, session, "--socket", path,
             "--state", os.path.join(work, "state", "s.json"), "--device", "null", "--log-level", "error"]
    limited = subprocess.Popen(shell, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(path):
        time.sleep(0.05)
    held = []
    for _ in range(1100):
        # A full listen backlog refuses at once; give the daemon a moment to accept, up to 5 s.
        for _ in range(50):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(5)
            try:
                client.connect(path)
                held.append(client)
                break
            except OSError:
                client.close()
                time.sleep(0.1)
        else:
            break
    time.sleep(1)
    started = time.monotonic()
    try:
        answered = b'"result"' in call(path, {"jsonrpc": "2.0", "id": 4, "method": "status"})
    except OSError:
        answered = False
    took = time.monotonic() - started
    descriptors = len(os.listdir(f"/proc/{limited.pid}/fd"))
    print(f"7  {len(held)} idle connections, nofile 1 024: status {'answered' if answered else 'failed'} in {took * 1000:.0f} ms, {descriptors} descriptors open in the daemon")
    for client in held:
        client.close()
    limited.send_signal(signal.SIGTERM)
    limited.wait(timeout=20)


def long_unknown_name(binary, work, session):
    big = os.path.join(work, "big.json")
    with open(big, "w") as file:
        json.dump({"interval": {"min": "1h", "max": "1h"}, "clips": [{"id": f"clip-{n}", "file": "a.wav"} for n in range(10_000)]}, file)
    daemon = Daemon(binary, work, big)
    started = time.monotonic()
    try:
        call(daemon.path, {"jsonrpc": "2.0", "id": 5, "method": "enqueue", "params": {"clips": ["q" * 65_000]}})
        print(f"9  enqueue of an unknown 65 000-character name, 10 000 clips: answered in {(time.monotonic() - started) * 1000:.0f} ms")
    except TimeoutError:
        print("9  enqueue of an unknown 65 000-character name, 10 000 clips: no answer within 60 s")
    daemon.process.kill()
    daemon.process.wait()


def odd_session_files(binary, work, session):
    for what, path in [("/dev/zero", "/dev/zero"), ("a FIFO", os.path.join(work, "fifo")), ("a 50 MB file", os.path.join(work, "huge.json"))]:
        if what == "a FIFO":
            os.mkfifo(path)
        if what == "a 50 MB file":
            with open(path, "w") as file:
                file.write('{ "clips": [ { "file": "a.wav" } ], "x": [' + "1," * 25_000_000 + "1] }")
        started = time.monotonic()
        check = subprocess.Popen([binary, path, "--check"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peak = 0
        while check.poll() is None and time.monotonic() - started < 10:
            peak = max(peak, rss_kb(check.pid))
            time.sleep(0.05)
        if check.poll() is None:
            check.kill()
            check.wait()
            print(f"10 --check on {what}: still running after 10 s, {peak} kB resident (killed)")
        else:
            print(f"10 --check on {what}: exit {check.returncode} after {(time.monotonic() - started) * 1000:.0f} ms, peak {peak} kB")


FIGURES = {"4": unread_replies, "5": client_names, "6": rounds, "7": idle_connections, "8": storm_then_clear,
           "9": long_unknown_name, "10": odd_session_files}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--only", default="4,5,6,7,8,9,10", help="which figures, by number")
    parser.add_argument("--clips", default=os.path.join(os.path.dirname(__file__), "..", "..", "clips"))
    arguments = parser.parse_args()
    binary = os.path.join(arguments.bin, "jukeboxd")
    for number in arguments.only.split(","):
        work = tempfile.mkdtemp(prefix="jukebox-abuse-")
        try:
            shutil.copy(os.path.join(arguments.clips, "water.wav"), os.path.join(work, "a.wav"))
            session = os.path.join(work, "s.json")
            with open(session, "w") as file:
                json.dump({"interval": {"min": "1h", "max": "1h"}, "clips": [{"file": "a.wav"}]}, file)
            FIGURES[number](binary, work, session)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
