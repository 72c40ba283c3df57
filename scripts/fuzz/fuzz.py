#!/usr/bin/env python3
"""Mutation fuzzer for jukeboxd's two parsers of untrusted input, run against the built binaries.

  session  mutates the session files in corpus/session/ and runs `jukeboxd FILE --check` on
           each: it must exit 0 or a refusal the start also makes (65, 66, 69, 73, 78) with a
           message, within the time limit, never die
           by a signal or print a Swift runtime error.
  control  starts one jukeboxd and sends it mutated JSON-RPC lines from corpus/control/ over
           many connections (some never read, some half-close, some cut the line short); the
           daemon must stay up, keep answering `status`, and stay within a memory bound.

  mqtt     starts a mosquitto broker of its own and one jukeboxd connected to it, and publishes
           mutated payloads to every command topic (and to topics that are not commands); the
           daemon must stay up, keep answering `status`, and stay within a memory bound.
  upload   starts one jukeboxd with the web remote on 127.0.0.1 (open) and a loudness target,
           and uploads to it: WAV files of float samples with NaN, infinities and overs at
           random places (each must be taken, and `loudness` must then answer with every
           figure); names with dots, spaces, controls, direction marks and folders (no stored
           name may be hidden or leave the folder); and files ffmpeg must refuse whatever they
           are called: playlists, concat lists and URLs naming a private file outside the
           folder, and mangled recordings (none may become a clip holding the private file).
  http     starts two jukeboxd with the web remote on 127.0.0.1 (open: no password, so the
           requests reach the handlers), one serving plain HTTP and one HTTPS, and sends them
           mutated raw HTTP requests from corpus/http/: JSON-RPC, logins, uploads and
           multipart forms, with broken heads, lengths and bodies (to the HTTPS port as plain
           bytes, which it reads to redirect them); the same checks.

Deterministic for a given --seed. A failing input is saved under --out and named in the
output, so it can be replayed by hand. Exits 1 on the first failure.

  calendar mutates the iCalendar files in corpus/calendar/ (Google's, Outlook's and
           Nextcloud's shapes) and runs `jukeboxd FILE --check` on a session whose calendar is
           that file, which reads and expands it with libical as the daemon does: it must exit
           0 (a calendar that cannot be read is a warning), within the time limit, never die by
           a signal or print a raw error.
  players  starts one jukeboxd whose session ducks a fake MPD and a fake snapserver, which
           answer with mutated replies (corpus/players/), hold connections or drop them, while
           clips play one after another; the same checks.
  esphome  starts two jukeboxd with Home Assistant's media player on 127.0.0.1, one without a
           key and one with one, and sends them mutated message streams (hello, device info,
           the entity list, a subscription, a volume, a ping) and mutated handshakes, each on a
           connection of its own; the same checks, and a hello is answered after it all.

  fuzz.py --bin .build/debug --seconds 60 [--seed 1] [--out DIR] [session|calendar|control|mqtt|http|upload|players|esphome|all]
"""
import argparse
import base64
import copy
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
CLIPS = os.path.join(HERE, "..", "..", "clips")

# Values that broke, or could break, a parser or what uses its output.
INTERESTING = [
    b'"9999999999999h"', b'"2500000000000h2500000000000h"', b'1e308', b'-1e308', b'1e-320', b'-0', b'0.0000001',
    b'18446744073709551616', b'-9223372036854775809', b'NaN', b'Infinity', b'null', b'true', b'[]', b'{}',
    b'"' + b'x' * 70000 + b'"', b'"\\ud800"', b'"\\u0000"', b'"\xff\xfe"', b'"../../../../etc/passwd"',
    b'"/dev/zero"', b'"24:00"', b'"00:00"', b'"99:99"', b'[' * 600, b'{"a":' * 300, b'"a","a"',
    b'"\xef\xbb\xbf"', b'"' + "é🎵".encode() * 50 + b'"', b'"1h-2m"', b'"0s"', b'"ms"', b'1000000',
]


# The same, as JSON values, for mutations that keep the document valid JSON and so reach the
# checks behind the parser.
VALUES = [
    "9999999999999h", "2500000000000h2500000000000h", "87600h", "87601h", "0s", "1h-2m", "", "x" * 70000,
    "../../../../etc/passwd", "/dev/zero", "24:00", "00:00", "99:99", "\u0000", "é🎵" * 50, "always", "never",
    "sunset-12h", "dawn+12h1s", "sunrise-", "dusk+1e308h", "02-29", "12-24..01-06", "0000-01-01", "9999-12-31..0001-01-01", "holidays", "*:00", "*:60", "07:55@sun-sat", "02:30@mon,mon,mon",
    1e308, -1e308, 0, -1, 0.5, 18446744073709551616, 2147483647, 1e-320, True, None, [], {}, [[]] * 50, {"a": {"b": {}}},
]


def leaves(value, path=()):
    """Every place in a JSON document, as a path of keys and indices."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))


def mutate_value(data: bytes, rng: random.Random) -> bytes:
    """Valid JSON still: one value replaced, a key added or removed, a list item repeated."""
    try:
        document = json.loads(data)
    except ValueError:
        return data
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(list(leaves(document)))
        if not path:
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        choice = rng.randrange(4)
        if choice == 0 or choice == 1:
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif choice == 2 and isinstance(parent, dict):
            del parent[path[-1]]
        elif choice == 2 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
        elif isinstance(parent, dict):
            parent[rng.choice(["version", "volume", "leadIn", "fade", "weight", "gain", "windows", "days", "from", "to", "min", "max", "cue", "id", "dates", "except", "location", "latitude", "holidays", "at", "atGrace", "quiet", "time"])] = copy.deepcopy(rng.choice(VALUES))
    return json.dumps(document).encode()


def mutate(data: bytes, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return mutate_value(data, rng)
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(8)
        position = rng.randrange(len(data) + 1)
        if choice == 0 and data:  # flip a byte
            data[min(position, len(data) - 1)] = rng.randrange(256)
        elif choice == 1:  # drop a span
            del data[position:position + rng.randint(1, 16)]
        elif choice == 2:  # insert an interesting value
            data[position:position] = rng.choice(INTERESTING)
        elif choice == 3:  # replace a value after a colon
            colon = data.find(b":", position)
            if colon >= 0:
                end = colon + 1
                while end < len(data) and data[end] not in b",}]":
                    end += 1
                data[colon + 1:end] = rng.choice(INTERESTING)
        elif choice == 4 and data:  # duplicate a span
            span = data[position:position + rng.randint(1, 64)]
            data[position:position] = span
        elif choice == 5:  # a byte order mark or junk up front
            data[0:0] = rng.choice([b"\xef\xbb\xbf", b"\x00", b" " * 10])
        elif choice == 6:  # truncate
            del data[position:]
        else:  # splice in a key that is already there
            data[position:position] = b'"clips":[],'
    return bytes(data)


def fail(kind, what, sample, out):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{kind}-failure")
    with open(path, "wb") as file:
        file.write(sample)
    print(f"fuzz {kind}: FAILED: {what}; input kept as {path}")
    sys.exit(1)


def fuzz_sessions(binary, deadline, rng, out):
    seeds = [open(os.path.join(CORPUS, "session", name), "rb").read() for name in sorted(os.listdir(os.path.join(CORPUS, "session")))]
    work = tempfile.mkdtemp(prefix="jukebox-fuzz-")
    for name in os.listdir(CLIPS):
        if name.endswith(".wav"):
            os.symlink(os.path.abspath(os.path.join(CLIPS, name)), os.path.join(work, name))
    path = os.path.join(work, "session.json")
    runs = 0
    try:
        while time.monotonic() < deadline:
            sample = mutate(rng.choice(seeds), rng)
            with open(path, "wb") as file:
                file.write(sample)
            try:
                result = subprocess.run([binary, path, "--check"], capture_output=True, timeout=10)
            except subprocess.TimeoutExpired:
                fail("session", "jukeboxd --check took over 10 s", sample, out)
            runs += 1
            stderr = result.stderr.decode(errors="replace")
            if result.returncode < 0:
                fail("session", f"jukeboxd --check died by signal {-result.returncode}", sample, out)
            # 73, 78: the state folder or a password file, refused as the start refuses them.
            if result.returncode not in (0, 65, 66, 69, 73, 78):
                fail("session", f"jukeboxd --check exited {result.returncode}: {stderr[:300]}", sample, out)
            if "Fatal error" in stderr or "DecodingError" in stderr or "Stack dump" in stderr:
                fail("session", f"a raw error reached the user: {stderr[:300]}", sample, out)
            if result.returncode != 0 and not stderr.strip():
                fail("session", "refused without a message", sample, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"fuzz session: {runs} mutated session files, no crash, hang or raw error")


def mutate_calendar(data: bytes, rng: random.Random) -> bytes:
    """Lines of iCalendar dropped, repeated, swapped or cut; values replaced by hostile ones."""
    lines = data.split(b"\r\n")
    hostile = [b"FREQ=SECONDLY", b"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", b"FREQ=DAILY;COUNT=999999999", b"19000101", b"99991231T235959Z",
               b"-1", b"", b"\x00", b"\xff\xfe", b"A" * 5000, b";TZID=Nowhere/Else", b"BEGIN:VEVENT", b"END:VCALENDAR", b"=" * 40,
               b"FREQ=WEEKLY;BYDAY=" + b"MO," * 300 + b"TU", b"FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR", b"P1000Y", b"PT-1H"]
    for _ in range(rng.randint(1, 6)):
        if not lines:
            lines = [b""]
        index = rng.randrange(len(lines))
        choice = rng.randrange(7)
        if choice == 0:
            del lines[index]
        elif choice == 1:
            lines[index:index] = [lines[index]] * rng.randint(1, 200)
        elif choice == 2:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        elif choice == 3 and b":" in lines[index]:
            name = lines[index].split(b":", 1)[0]
            lines[index] = name + b":" + rng.choice(hostile)
        elif choice == 4:
            lines[index] = lines[index][:rng.randrange(len(lines[index]) + 1)]
        elif choice == 5:
            lines[index] = rng.choice(hostile)
        else:
            lines[index:index] = [rng.choice(hostile)]
    return b"\r\n".join(lines)


def fuzz_calendars(binary, deadline, rng, out):
    seeds = [open(os.path.join(CORPUS, "calendar", name), "rb").read() for name in sorted(os.listdir(os.path.join(CORPUS, "calendar")))]
    work = tempfile.mkdtemp(prefix="jukebox-fuzz-")
    os.symlink(os.path.abspath(os.path.join(CLIPS, "walk.wav")), os.path.join(work, "walk.wav"))
    with open(os.path.join(work, "session.json"), "w") as file:
        json.dump({"plans": {"regular": [{"at": "08:00", "clip": "walk"}], "none": [], "late": []}, "days": [{"plan": "regular"}],
                   "calendars": [{"name": "fuzz", "source": "calendar.ics", "plans": {"No school": "none", "Late start": "late", "Exam": "regular"}}],
                   "clips": [{"file": "walk.wav"}]}, file)
    runs = 0
    try:
        while time.monotonic() < deadline:
            sample = mutate_calendar(rng.choice(seeds), rng)
            with open(os.path.join(work, "calendar.ics"), "wb") as file:
                file.write(sample)
            try:
                result = subprocess.run([binary, os.path.join(work, "session.json"), "--check", "--device", "null", "--state", os.path.join(work, "state.json")], capture_output=True, timeout=10)
            except subprocess.TimeoutExpired:
                fail("calendar", "jukeboxd --check took over 10 s on a calendar", sample, out)
            runs += 1
            text = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
            if result.returncode != 0:
                fail("calendar", f"jukeboxd --check exited {result.returncode} on a calendar: {text[:300]}", sample, out)
            if "Fatal error" in text or "Stack dump" in text or "calendar fuzz:" not in text:
                fail("calendar", f"a raw error, or no word of the calendar: {text[:300]}", sample, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"fuzz calendar: {runs} mutated calendars, no crash, hang or raw error")


def resident_kilobytes(pid):
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def call(path, line, timeout=10):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout)
        client.connect(path)
        client.sendall(line + b"\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            reply += chunk
        return reply


def fuzz_control(binary, deadline, rng, out):
    seeds = []
    for name in sorted(os.listdir(os.path.join(CORPUS, "control"))):
        seeds += [line.rstrip(b"\n") for line in open(os.path.join(CORPUS, "control", name), "rb") if line.strip()]
    work = tempfile.mkdtemp(prefix="jukebox-fuzz-")
    for name in os.listdir(CLIPS):
        if name.endswith(".wav"):
            shutil.copy(os.path.join(CLIPS, name), work)
    clips = [{"file": name} for name in sorted(os.listdir(work)) if name.endswith(".wav")]
    with open(os.path.join(work, "session.json"), "w") as file:
        json.dump({"interval": {"min": "1h", "max": "1h"}, "clips": clips}, file)
    os.mkdir(os.path.join(work, "state"), 0o700)
    path = os.path.join(work, "c.sock")
    daemon = subprocess.Popen(
        [binary, os.path.join(work, "session.json"), "--socket", path, "--state", os.path.join(work, "state", "s.json"),
         "--device", "null", "--queue-limit", "2000", "--log-level", "error"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "log"), "wb"))
    sent = 0
    held = []
    try:
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        while time.monotonic() < deadline:
            batch = [mutate(rng.choice(seeds), rng) if rng.random() < 0.9 else rng.choice(seeds) for _ in range(rng.randint(1, 20))]
            payload = b"\n".join(batch) + (b"\n" if rng.random() < 0.8 else b"")
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(5)
            try:
                client.connect(path)
                client.sendall(payload)
                mode = rng.randrange(4)
                if mode == 0:  # read the answers
                    client.shutdown(socket.SHUT_WR)
                    while client.recv(65536):
                        pass
                elif mode == 1 and len(held) < 300:  # keep it open, never read
                    held.append(client)
                    client = None
                # else: close at once, answers unread
            except (OSError, socket.timeout) as error:
                if daemon.poll() is not None:
                    fail("control", f"jukeboxd exited ({daemon.returncode}) during the requests", payload, out)
                if isinstance(error, socket.timeout):
                    fail("control", "jukeboxd stopped answering a connection", payload, out)
            finally:
                if client is not None:
                    client.close()
            sent += len(batch)
            if daemon.poll() is not None:
                fail("control", f"jukeboxd died ({daemon.returncode})", payload, out)
            if sent % 200 < len(batch):
                try:
                    status = call(path, b'{"jsonrpc":"2.0","id":1,"method":"status"}')
                except OSError as error:
                    fail("control", f"status failed: {error}", payload, out)
                if b'"result"' not in status:
                    fail("control", f"status answered {status[:200]!r}", payload, out)
                rss = resident_kilobytes(daemon.pid)
                if rss > 400_000:
                    fail("control", f"jukeboxd grew to {rss} kB", payload, out)
        for client in held:
            client.close()
        status = call(path, b'{"jsonrpc":"2.0","id":1,"method":"status"}')
        if b'"result"' not in status:
            fail("control", f"status at the end answered {status[:200]!r}", b"", out)
        print(f"fuzz control: {sent} mutated requests on many connections; jukeboxd up, answering, {resident_kilobytes(daemon.pid)} kB resident")
    finally:
        for client in held:
            client.close()
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


class Daemon:
    """One jukeboxd on a session of the demo clips, with `extra` session fields; stopped with SIGTERM."""

    def __init__(self, binary, extra):
        self.work = tempfile.mkdtemp(prefix="jukebox-fuzz-")
        for name in os.listdir(CLIPS):
            if name.endswith(".wav"):
                shutil.copy(os.path.join(CLIPS, name), self.work)
        clips = [{"file": name} for name in sorted(os.listdir(self.work)) if name.endswith(".wav")]
        with open(os.path.join(self.work, "session.json"), "w") as file:
            json.dump(dict({"interval": {"min": "1h", "max": "1h"}, "clips": clips}, **extra), file)
        os.mkdir(os.path.join(self.work, "state"), 0o700)
        self.socket = os.path.join(self.work, "c.sock")
        self.log_path = os.path.join(self.work, "log")
        self.process = subprocess.Popen(
            [binary, os.path.join(self.work, "session.json"), "--socket", self.socket, "--state", os.path.join(self.work, "state", "s.json"),
             "--device", "null", "--queue-limit", "2000", "--log-level", "info"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "wb"))

    def log(self):
        with open(self.log_path, "rb") as file:
            return file.read().decode(errors="replace")

    def wait_for(self, text, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def check(self, kind, sample, out):
        """Up, answering `status`, within the memory bound, and no raw error in its log."""
        if self.process.poll() is not None:
            fail(kind, f"jukeboxd died ({self.process.returncode}): {self.log()[-500:]}", sample, out)
        try:
            status = call(self.socket, b'{"jsonrpc":"2.0","id":1,"method":"status"}')
        except OSError as error:
            fail(kind, f"status failed: {error}", sample, out)
        if b'"result"' not in status:
            fail(kind, f"status answered {status[:200]!r}", sample, out)
        rss = resident_kilobytes(self.process.pid)
        if rss > 400_000:
            fail(kind, f"jukeboxd grew to {rss} kB", sample, out)
        log = self.log()
        for raw in ("Fatal error", "DecodingError", "Stack dump", "NIOCore.", "IOError("):
            if raw in log:
                fail(kind, f"a raw error reached the log: {log[log.index(raw) - 200:log.index(raw) + 200]}", sample, out)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.work, ignore_errors=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mqtt_packet(kind, body):
    length, encoded = len(body), bytearray()
    while True:
        byte, length = length % 128, length // 128
        encoded.append(byte | (0x80 if length else 0))
        if not length:
            return bytes([kind]) + bytes(encoded) + body


def mqtt_string(data):
    return struct.pack(">H", len(data)) + data


def fuzz_mqtt(binary, deadline, rng, out):
    if not os.path.exists("/usr/sbin/mosquitto"):
        print("fuzz mqtt: SKIPPED: mosquitto is not installed (apt-get install mosquitto; scripts/test.sh installs it)")
        return
    seeds = []
    for line in open(os.path.join(CORPUS, "mqtt", "commands.txt"), "rb"):
        command, _, payload = line.rstrip(b"\n").partition(b"\t")
        seeds.append((command, payload))
    port = free_port()
    work = tempfile.mkdtemp(prefix="jukebox-fuzz-mqtt-")
    config = os.path.join(work, "mosquitto.conf")
    with open(config, "w") as file:
        file.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n" + ("user root\n" if os.getuid() == 0 else ""))
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", config], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    daemon = None
    sent = 0
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        daemon = Daemon(binary, {"name": "fuzz", "mqtt": {"broker": f"mqtt://127.0.0.1:{port}"}})
        if not daemon.wait_for("MQTT connected"):
            fail("mqtt", f"jukeboxd did not connect to the broker: {daemon.log()[-500:]}", b"", out)
        def connect():
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            connection.sendall(mqtt_packet(0x10, mqtt_string(b"MQTT") + bytes([4, 2, 0, 60]) + mqtt_string(b"jukebox-fuzz")))
            connection.recv(4)
            return connection

        publisher = connect()
        while time.monotonic() < deadline:
            command, payload = rng.choice(seeds)
            if rng.random() < 0.8:
                payload = mutate(payload, rng) if payload else rng.choice(INTERESTING)
            if rng.random() < 0.1:
                command = rng.choice([b"", b"+", b"#", b"volume/x", b"\x00", "é".encode(), b"x" * 300])
            topic = b"jukeboxd/fuzz/command/" + command
            retain = 1 if rng.random() < 0.05 else 0
            try:
                publisher.sendall(mqtt_packet(0x30 | retain, mqtt_string(topic) + payload))
            except OSError:
                # The broker drops a publisher whose topic it refuses (a wildcard, bad UTF-8).
                publisher.close()
                publisher = connect()
            sent += 1
            if sent % 100 == 0:
                daemon.check("mqtt", topic + b" " + payload, out)
        daemon.check("mqtt", b"", out)
        print(f"fuzz mqtt: {sent} mutated command payloads through mosquitto; jukeboxd up, answering, {resident_kilobytes(daemon.process.pid)} kB resident")
    finally:
        if daemon:
            daemon.stop()
        broker.terminate()
        broker.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


# Values that break HTTP heads and bodies.
HTTP_INTERESTING = [
    b"Content-Length: 99999999999999999999\r\n", b"Content-Length: -1\r\n", b"Content-Length: 5\r\nContent-Length: 6\r\n",
    b"Transfer-Encoding: chunked\r\n", b"Host: rebind.evil.example\r\n", b"Origin: http://evil.example\r\n", b"Origin: null\r\n",
    b"Authorization: Bearer \r\n", b"Authorization: bearer" + b" " * 5000 + b"\r\n", b"Cookie: jukebox_session=" + b";" * 3000 + b"\r\n",
    b"X: " + b"a" * 90000 + b"\r\n", b"\r\n\r\n", b"\n", b"\x00", b" HTTP/1.0", b"?name=../../x.wav&title=%ff%fe", b"; boundary=\"\"",
    b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\n", b"--XyZ--", b"\r\n--XyZ\r\n" * 50,
]


def mutate_http(data, rng):
    if rng.random() < 0.5:
        return mutate(data, rng)
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        position = rng.randrange(len(data) + 1)
        choice = rng.randrange(3)
        if choice == 0:
            data[position:position] = rng.choice(HTTP_INTERESTING)
        elif choice == 1:
            line = data.find(b"\r\n", position)
            if line >= 0:
                data[line + 2:line + 2] = rng.choice(HTTP_INTERESTING)
        else:
            del data[position:position + rng.randint(1, 40)]
    return bytes(data)


def fuzz_http(binary, deadline, rng, out):
    seeds = [open(os.path.join(CORPUS, "http", name), "rb").read() for name in sorted(os.listdir(os.path.join(CORPUS, "http")))]
    # Three of four requests go to the API over plain HTTP (what HTTPS carries is handled the
    # same); the rest go, as plain bytes, to a daemon serving HTTPS, whose port reads a plain
    # request's head to answer it with a redirect.
    daemons = {"plain": Daemon(binary, {"maxUploadSize": 100000, "http": {"listen": "127.0.0.1:0", "https": False}}),
               "https port": Daemon(binary, {"maxUploadSize": 100000, "http": {"listen": "127.0.0.1:0"}})}
    sent = {name: 0 for name in daemons}
    try:
        ports = {}
        for name, daemon in daemons.items():
            if not daemon.wait_for("web remote listening on"):
                fail("http", f"the web remote ({name}) did not start: {daemon.log()[-500:]}", b"", out)
            line = next(line for line in daemon.log().splitlines() if "web remote listening on" in line)
            ports[name] = int(line.rsplit("(port ", 1)[1].rstrip(")"))
        while time.monotonic() < deadline:
            name = "plain" if rng.random() < 0.75 else "https port"
            sample = rng.choice(seeds)
            if rng.random() < 0.9:
                sample = mutate_http(sample, rng)
            client = socket.create_connection(("127.0.0.1", ports[name]), timeout=1)
            try:
                client.sendall(sample)
                if rng.random() < 0.8:
                    client.shutdown(socket.SHUT_WR)
                    try:
                        while client.recv(65536):
                            pass
                    except socket.timeout:
                        pass
            except OSError:
                pass
            finally:
                client.close()
            sent[name] += 1
            if sent[name] % 50 == 0:
                daemons[name].check("http", sample, out)
        for daemon in daemons.values():
            daemon.check("http", b"", out)
        print(f"fuzz http: {sent['plain']} mutated HTTP requests and forms, and {sent['https port']} sent as plain HTTP to the HTTPS port; "
              f"jukeboxd up, answering, {resident_kilobytes(daemons['plain'].process.pid)} and {resident_kilobytes(daemons['https port'].process.pid)} kB resident")
    finally:
        for daemon in daemons.values():
            daemon.stop()


def esphome_frame(kind, body=b""):
    """A plaintext frame of ESPHome's native API: 0, the size and the type as varints, the body."""
    def varint(value):
        out = bytearray()
        while True:
            byte = value & 0x7F
            value >>= 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                return bytes(out)
    return b"\x00" + varint(len(body)) + varint(kind) + body


# What Home Assistant sends, message by message: hello, device info, the entity list, the
# subscription, a volume of 0.3 for the media player (key 0x6A756B65), a ping, a disconnect.
ESPHOME_SESSION = [
    esphome_frame(1, b"\x0a\x04fuzz\x10\x01\x18\x0d"), esphome_frame(9), esphome_frame(11), esphome_frame(20),
    esphome_frame(65, b"\x0d" + struct.pack("<I", 0x6A756B65) + b"\x20\x01\x2d" + struct.pack("<f", 0.3)), esphome_frame(7), esphome_frame(5),
]
ESPHOME_INTERESTING = [b"\xff\xff\xff\xff\x0f", b"\x80" * 6, b"\xff\xff\x03", b"\x00\x00", b"\x01\xff\xff", b"\x41" * 200, b"\x00\xff\xff\x03\x07"]


def mutate_bytes(data, rng):
    """Bytes flipped, dropped, repeated or cut, and hostile sizes and varints spliced in."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        position = rng.randrange(len(data) + 1)
        choice = rng.randrange(5)
        if choice == 0 and data:
            data[min(position, len(data) - 1)] = rng.randrange(256)
        elif choice == 1:
            del data[position:position + rng.randint(1, 16)]
        elif choice == 2:
            data[position:position] = rng.choice(ESPHOME_INTERESTING)
        elif choice == 3 and data:
            data[position:position] = data[position:position + rng.randint(1, 64)]
        else:
            del data[position:]
    return bytes(data)


def send_and_read(port, sample, timeout=1):
    """Sends `sample` on a connection of its own, closes its writing side, and reads what comes
    back until the server closes or `timeout` passes."""
    received = b""
    client = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        client.sendall(sample)
        client.shutdown(socket.SHUT_WR)
        while True:
            chunk = client.recv(65536)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    finally:
        client.close()
    return received


def fuzz_esphome(binary, deadline, rng, out):
    """Home Assistant's media player: mutated message streams to a daemon without a key, and
    mutated handshakes (the client's hello and first Noise message) to one with a key."""
    key = base64.b64encode(bytes(range(32))).decode()
    daemons = {"plain": Daemon(binary, {"esphome": {"listen": "127.0.0.1:0"}}),
               "keyed": Daemon(binary, {"esphome": {"listen": "127.0.0.1:0", "encryptionKey": key}})}
    sent = {name: 0 for name in daemons}
    try:
        ports = {}
        for name, daemon in daemons.items():
            if not daemon.wait_for("Home Assistant's media player"):
                fail("esphome", f"the media player ({name}) did not start: {daemon.log()[-500:]}", b"", out)
            line = next(line for line in daemon.log().splitlines() if "listening on 127.0.0.1:" in line)
            ports[name] = int(line.split("listening on 127.0.0.1:", 1)[1].split(",", 1)[0])
        handshake = b"\x01\x00\x00" + b"\x01\x00\x31\x00" + bytes(rng.randrange(256) for _ in range(48))
        while time.monotonic() < deadline:
            name = "plain" if rng.random() < 0.75 else "keyed"
            if name == "plain":
                sample = b"".join(rng.sample(ESPHOME_SESSION, rng.randint(1, len(ESPHOME_SESSION))))
            else:
                sample = handshake
            if rng.random() < 0.9:
                sample = mutate_bytes(sample, rng)
            send_and_read(ports[name], sample)
            sent[name] += 1
            if sent[name] % 50 == 0:
                daemons[name].check("esphome", sample, out)
        for daemon in daemons.values():
            daemon.check("esphome", b"", out)
        answer = send_and_read(ports["plain"], ESPHOME_SESSION[0])
        if not answer.startswith(b"\x00") or answer[2:3] != b"\x02":
            fail("esphome", f"a hello after the fuzzing was answered with {answer[:40]!r}", ESPHOME_SESSION[0], out)
        print(f"fuzz esphome: {sent['plain']} mutated message streams and {sent['keyed']} mutated handshakes; "
              f"jukeboxd up, answering, {resident_kilobytes(daemons['plain'].process.pid)} and {resident_kilobytes(daemons['keyed'].process.pid)} kB resident")
    finally:
        for daemon in daemons.values():
            daemon.stop()


def wav_float32(samples, rate=8000):
    """A mono 32-bit float WAV of `samples` as given: NaN, infinities and overs included."""
    data = struct.pack(f"<{len(samples)}f", *samples)
    fmt = struct.pack("<HHIIHH", 3, 1, rate, rate * 4, 4, 32)
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data


UPLOAD_NAMES = [
    " .session.json.bak", " .session.json.tmp", ". . .x.wav", "../../escape.wav", "a/b/c.wav", "\u202eevil.wav", "a\u0085b.wav",
    "a\u2028b.wav", "\u200b.wav", " ", ".", "..", "...", "x" * 300 + ".wav", "rec.wav", "rec.ogg", "r\u00e9c \U0001F3B5.wav",
    "con.wav", "\x00a.wav", "a\\b.wav", "%2e%2e.wav", "state.json", ".state.json.lock",
]


def http_request(port, method, target, body=b"", timeout=30):
    """One request over a connection of its own; the status code, or 0 when there was no answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as client:
        head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        client.sendall(head.encode() + body)
        reply = b""
        try:
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except socket.timeout:
            pass
    try:
        return int(reply.split(b" ", 2)[1]), reply
    except (IndexError, ValueError):
        return 0, reply


def fuzz_uploads(binary, deadline, rng, out):
    if shutil.which("ffmpeg") is None:
        print("fuzz upload: SKIPPED: ffmpeg is not installed (scripts/install-deps.sh --tests installs it)")
        return
    from urllib.parse import quote
    daemon = Daemon(binary, {"loudness": -18, "maxUploadSize": 400000, "http": {"listen": "127.0.0.1:0", "https": False}})
    private = tempfile.mkdtemp(prefix="jukebox-fuzz-private-")
    os.chmod(private, 0o700)
    secret = os.path.join(private, "diary.wav")
    # 1 234 Hz for 3 s: what a clip made of it would hold.
    import math
    with open(secret, "wb") as file:
        file.write(wav_float32([0.5 * math.sin(2 * math.pi * 1234 * i / 8000) for i in range(24000)]))
    naming = [
        f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3,\n{secret}\n#EXT-X-ENDLIST\n".encode(),
        f"#EXTM3U\n#EXTINF:3,\nfile://{secret}\n#EXT-X-ENDLIST\n".encode(),
        f"ffconcat version 1.0\nfile '{secret}'\n".encode(),
        f"file://{secret}".encode(), f"concat:{secret}|{secret}".encode(), f"[playlist]\nFile1={secret}\n".encode(),
    ]
    recordings = []
    for codec, extension in [(["-c:a", "libopus"], "webm"), (["-c:a", "aac"], "m4a"), (["-c:a", "libvorbis"], "ogg")]:
        made = os.path.join(private, "seed." + extension)
        subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=1", *codec, made], check=True)
        recordings.append((open(made, "rb").read(), extension))
    counts = {"float": 0, "names": 0, "naming": 0, "mangled": 0}
    try:
        if not daemon.wait_for("web remote listening on"):
            fail("upload", f"the web remote did not start: {daemon.log()[-500:]}", b"", out)
        line = next(line for line in daemon.log().splitlines() if "web remote listening on" in line)
        port = int(line.rsplit("(port ", 1)[1].rstrip(")"))
        clips_folder = daemon.work
        sent = 0
        while time.monotonic() < deadline:
            kind = rng.choice(list(counts))
            if kind == "float":
                samples = [0.1 * math.sin(i / 5) for i in range(rng.randint(1, 16000))]
                for _ in range(rng.randint(1, 20)):
                    samples[rng.randrange(len(samples))] = rng.choice([float("nan"), float("inf"), float("-inf"), 3e38, -3e38, 1e-45, 2.0])
                name, body = f"f{sent}.wav", wav_float32(samples)
            elif kind == "names":
                name = rng.choice(UPLOAD_NAMES) + rng.choice(["", ".wav", " .wav", "\u202e", "/"])
                body = wav_float32([0.1] * 800)
            elif kind == "naming":
                name = f"n{sent}." + rng.choice(["m4a", "mp3", "webm", "ogg", "aac", "wav", "m3u8"])
                body = rng.choice(naming)
                if rng.random() < 0.5:
                    body = mutate(body, rng)
            else:
                data, extension = rng.choice(recordings)
                name, body = f"m{sent}.{extension}", mutate(data, rng)
            status, reply = http_request(port, "POST", "/clips?name=" + quote(name, safe=""), body)
            counts[kind] += 1
            sent += 1
            if status == 0 or status >= 500 and status != 503:
                fail("upload", f"{name!r} ({kind}) was answered {reply[:300]!r}", body, out)
            if kind == "float" and status != 201:
                fail("upload", f"a float WAV with NaN and infinities was refused: {reply[:300]!r}", body, out)
            if kind == "naming" and status == 201:
                fail("upload", f"a file naming {secret} became a clip: {reply[:300]!r}", body, out)
            if secret.encode() in reply or b"diary" in reply:
                fail("upload", f"an answer named the private file: {reply[:300]!r}", body, out)
            for stored in os.listdir(clips_folder):
                if stored.startswith((".", " ")) and stored not in (".session.json.bak",) and not stored.startswith(".upload-"):
                    fail("upload", f"{name!r} was stored hidden as {stored!r}", body, out)
                if any(0x202a <= ord(c) <= 0x202e or ord(c) < 0x20 or 0x80 <= ord(c) < 0xa0 or c in "\u2028\u2029" for c in stored):
                    fail("upload", f"{name!r} was stored as {stored!r}", body, out)
            if os.path.exists(os.path.join(os.path.dirname(clips_folder), "escape.wav")):
                fail("upload", f"{name!r} was stored outside the clips folder", body, out)
            if sent % 10 == 0:
                loudness = call(daemon.socket, b'{"jsonrpc":"2.0","id":1,"method":"loudness"}')
                if b'"result"' not in loudness:
                    fail("upload", f"loudness answered {loudness[:300]!r}", body, out)
                daemon.check("upload", body, out)
        daemon.check("upload", b"", out)
        print(f"fuzz upload: {counts['float']} float WAVs with NaN and infinities, {counts['names']} hostile names, {counts['naming']} files naming a private file, "
              f"{counts['mangled']} mangled recordings; jukeboxd up, answering, {resident_kilobytes(daemon.process.pid)} kB resident")
    finally:
        daemon.stop()
        shutil.rmtree(private, ignore_errors=True)


class FakePlayer:
    """A player on a loopback port that answers every connection from `answer(request)` with
    mutated replies: a fake MPD (a greeting, then an answer per command line) or a fake
    snapserver (a JSON line per request). Some connections it holds without a word, some it
    closes at once; each is served on a thread of its own."""

    def __init__(self, kind, rng):
        import threading
        self.kind = kind
        self.rng = random.Random(rng.random())
        folder = os.path.join(CORPUS, "players")
        self.replies = {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.served = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def reply(self, name):
        data = self.replies[name]
        return mutate(data, self.rng) if self.rng.random() < 0.5 else data

    def serve(self):
        import threading
        while True:
            try:
                peer, _ = self.listener.accept()
            except OSError:
                return
            self.served += 1
            threading.Thread(target=self.answer, args=(peer,), daemon=True).start()

    def answer(self, peer):
        peer.settimeout(5)
        try:
            fate = self.rng.random()
            if fate < 0.05:
                time.sleep(3)  # holds it without a word
                return
            if fate < 0.1:
                return  # closes at once
            if self.kind == "mpd":
                peer.sendall(self.reply("mpd-greeting.txt"))
            buffer = b""
            while True:
                data = peer.recv(4096)
                if not data:
                    return
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if self.kind == "mpd":
                        name = "mpd-status.txt" if line.startswith(b"status") else self.rng.choice(["mpd-ok.txt", "mpd-ok.txt", "mpd-ack.txt"])
                        peer.sendall(self.reply(name))
                    else:
                        if self.rng.random() < 0.3:
                            peer.sendall(self.reply("snapserver-notification.json"))
                        name = "snapserver-status.json" if b"GetStatus" in line else "snapserver-setvolume.json"
                        peer.sendall(self.reply(name).rstrip(b"\n") + b"\n")
        except OSError:
            pass
        finally:
            peer.close()

    def stop(self):
        self.listener.close()


def fuzz_players(binary, deadline, rng, out):
    """One jukeboxd whose session ducks a fake MPD and a fake snapserver that answer mutated
    replies, hold connections or drop them, while clips play one after another (the null
    device plays them at once, so each ducks and raises the players); the daemon must stay up,
    keep answering `status`, stay within a memory bound, and log no raw error."""
    mpd, snapserver = FakePlayer("mpd", rng), FakePlayer("snapserver", rng)
    daemon = Daemon(binary, {"duck": {"mpd": [f"127.0.0.1:{mpd.port}"], "attack": "0s", "release": "0s",
                                      "snapcast": {"server": f"127.0.0.1:{snapserver.port}", "clients": ["den"]}}})
    played = 0
    try:
        if not daemon.wait_for("control socket listening"):
            fail("players", f"jukeboxd did not start: {daemon.log()[-500:]}", b"", out)
        while time.monotonic() < deadline:
            now = rng.random() < 0.3
            request = {"jsonrpc": "2.0", "id": 1, "method": "enqueue", "params": {"clips": ["water"], "now": now}}
            answer = call(daemon.socket, json.dumps(request).encode())
            if b'"result"' not in answer and b"queue-full" not in answer:
                fail("players", f"enqueue answered {answer[:200]!r}", b"", out)
            played += 1
            if played % 20 == 0:
                daemon.check("players", b"", out)
            time.sleep(0.05)
        daemon.check("players", b"", out)
        print(f"fuzz players: {played} clips ducking a fake MPD ({mpd.served} connections) and a fake snapserver "
              f"({snapserver.served}) that answer mutated replies, hold or drop connections; jukeboxd up, answering, "
              f"{resident_kilobytes(daemon.process.pid)} kB resident")
    finally:
        daemon.stop()
        mpd.stop()
        snapserver.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", nargs="?", default="all", choices=["session", "calendar", "control", "mqtt", "http", "upload", "players", "esphome", "all"])
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "..", ".build", "debug"))
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "jukebox-fuzz-failures"))
    arguments = parser.parse_args()
    binary = os.path.join(arguments.bin, "jukeboxd")
    rng = random.Random(arguments.seed)
    parts = ["session", "calendar", "control", "mqtt", "http", "upload", "players", "esphome"] if arguments.what == "all" else [arguments.what]
    share = arguments.seconds / len(parts)
    run = {"session": fuzz_sessions, "calendar": fuzz_calendars, "control": fuzz_control, "mqtt": fuzz_mqtt, "http": fuzz_http, "upload": fuzz_uploads, "players": fuzz_players, "esphome": fuzz_esphome}
    for part in parts:
        deadline = time.monotonic() + share
        run[part](binary, deadline, rng, arguments.out)


if __name__ == "__main__":
    main()
