#!/usr/bin/env python3
"""Home Assistant's media player, measured (run by scripts/bench/esphome.sh, with the python of
scripts/esphome/client-venv.sh, which has aioesphomeapi):

  announce  a quiet 60 s clip plays; aioesphomeapi sends `play_media` with `announce: true`
            for a loud 1 s WAV served on loopback (as Home Assistant's media proxy serves it);
            the time from just before the command is sent to the first loud sample in the paced
            sink's capture (jukeboxd fetches, decodes whole, cuts in). Beside it, in the same run,
            `jukebox play --now` of the same file, already in the session.
  idle      daemons on the null device, one with the `esphome` section and Home Assistant
            connected and subscribed (it pings every 20 s), one without, and (with --bus, the
            D-Bus of scripts/mdns-rig.sh with its avahi-daemon) one announced on mDNS: resident
            and anonymous memory, and CPU over 60 s (the scheduler's accounting, every thread).
  libraries what avahi-client and the libraries only it needs (libdbus, libsystemd…) hold
            resident in the daemon without the section: they are loaded by every daemon.
Prints one line per figure: NAME|median|min|max.
"""
import argparse, asyncio, http.server, json, os, statistics, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soundclock import clock_offset, cpu_seconds, free_port, onset, tone
from aioesphomeapi import APIClient, MediaPlayerEntityState, MediaPlayerInfo, MediaPlayerState

RATE = 44100
KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="


def serve(path):
    body = open(path, "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/bell.wav"


def start(args, session, name, wanted, environment=None):
    daemon = subprocess.Popen(
        [os.path.join(args.bin, "jukeboxd"), session, "--socket", os.path.join(args.work, name + ".sock"),
         "--state", os.path.join(args.work, name + ".state.json")], stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, **(environment or {})))
    for line in daemon.stderr:
        if wanted in line:
            threading.Thread(target=lambda: [None for _ in daemon.stderr], daemon=True).start()
            return daemon
    sys.exit(f"esphome.py: {name} did not start")


def own_cgroup(pid, name):
    """The daemon alone in a cgroup (v2) of its own where the machine allows, so that its CPU is
    the cgroup's: every thread it ran, those that ended between two readings too."""
    try:
        mount = next(line.split()[1] for line in open("/proc/mounts") if line.split()[2] == "cgroup2")
        folder = os.path.join(mount, f"jukebox-bench-{os.getpid()}-{name}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
            procs.write(str(pid))
        return folder
    except (OSError, StopIteration):
        return None


def memory(pid):
    status = open(f"/proc/{pid}/status").read()
    rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
    rollup = open(f"/proc/{pid}/smaps_rollup").read()
    anonymous = int(next(line for line in rollup.splitlines() if line.startswith("Anonymous:")).split()[1]) / 1024
    return rss, anonymous


def avahi_only_libraries(binary):
    """The shared libraries the daemon loads for avahi-client alone (not needed by any other)."""
    def closure(path):
        names = set()
        for line in subprocess.run(["ldd", path], capture_output=True, text=True).stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>":
                names.add((parts[0], parts[2]))
        return names
    paths = dict(closure(binary))
    needed = [line.split("[")[1].rstrip("]") for line in subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout.splitlines() if "(NEEDED)" in line]
    avahi, others = set(), set()
    for name in needed:
        into = avahi if name.startswith("libavahi-") else others
        into.add(name)
        if name in paths:
            into.update(dependency for dependency, _ in closure(paths[name]))
    return {name: os.path.realpath(paths[name]) for name in sorted(avahi - others) if name in paths}


def resident_in(pid, paths):
    """Resident kB of the mappings of these files in the process."""
    total, current = 0, None
    for line in open(f"/proc/{pid}/smaps"):
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            current = os.path.realpath(fields[5]) if len(fields) > 5 else None
        elif fields[0] == "Rss:" and current in paths:
            total += int(fields[1])
    return total


def report(name, values, digits=1):
    print(f"{name}|{statistics.median(values):.{digits}f}|{min(values):.{digits}f}|{max(values):.{digits}f}", flush=True)


async def measure(args):
    music = os.path.join(args.work, "music")
    os.makedirs(music, exist_ok=True)
    tone(os.path.join(music, "long.wav"), RATE, 60, frequency=500, amplitude=300)   # about -40 dBFS: under onset's -26
    tone(os.path.join(music, "bell.wav"), RATE, 1, frequency=1000, amplitude=16000)
    port = free_port()
    clips = [{"file": "long.wav"}, {"file": "bell.wav"}]
    base = {"clipsDirectory": music, "interval": {"min": "1h", "max": "1h"}, "clips": clips}
    with_player = os.path.join(args.work, "player.json")
    json.dump(dict(base, device="pulse", esphome={"listen": f"127.0.0.1:{port}", "encryptionKey": KEY, "name": "Bench"}), open(with_player, "w"))
    daemon = start(args, with_player, "player", "Home Assistant's media player")
    jukebox = [os.path.join(args.bin, "jukebox"), "--socket", os.path.join(args.work, "player.sock")]
    address = serve(os.path.join(music, "bell.wav"))
    client = APIClient("127.0.0.1", port, None, noise_psk=KEY, client_info="bench")
    await client.connect(login=True)
    entities, _ = await client.list_entities_services()
    key = next(entity.key for entity in entities if isinstance(entity, MediaPlayerInfo))
    states = asyncio.Queue()
    client.subscribe_states(lambda state: isinstance(state, MediaPlayerEntityState) and states.put_nowait(MediaPlayerState(state.state)))

    async def until(wanted):
        async with asyncio.timeout(30):
            while await states.get() != wanted:
                pass

    offset = clock_offset(args.capture, RATE)
    heard = {"announce": [], "play --now": []}
    subprocess.run(jukebox + ["play", "long"], check=True, stdout=subprocess.DEVNULL)
    await until(MediaPlayerState.PLAYING)
    await asyncio.sleep(1)
    for _ in range(args.runs):
        for kind in heard:
            started = time.monotonic()
            if kind == "announce":
                client.media_player_command(key, media_url=address, announcement=True)
            else:
                subprocess.run(jukebox + ["play", "--now", "bell"], check=True, stdout=subprocess.DEVNULL)
            sound = await asyncio.to_thread(onset, args.capture, int((started + offset) * RATE), RATE)
            if sound is None:
                sys.exit(f"esphome.py: no sound after {kind}")
            heard[kind].append((sound - offset - started) * 1000)
            await until(MediaPlayerState.ANNOUNCING)
            await until(MediaPlayerState.PLAYING)
            await asyncio.sleep(1.5)
    for kind, values in heard.items():
        report(f"heard {kind}", values)
    subprocess.run(jukebox + ["stop"], check=True, stdout=subprocess.DEVNULL)
    await client.disconnect()
    daemon.terminate()
    daemon.wait()

    # Idle: with the media player (Home Assistant connected) and without, side by side.
    idle_player = os.path.join(args.work, "idle-player.json")
    idle_plain = os.path.join(args.work, "idle-plain.json")
    json.dump(dict(base, device="null", esphome={"listen": f"127.0.0.1:{port}", "encryptionKey": KEY, "name": "Bench"}), open(idle_player, "w"))
    json.dump(dict(base, device="null"), open(idle_plain, "w"))
    with_daemon = start(args, idle_player, "idle-player", "Home Assistant's media player")
    without = start(args, idle_plain, "idle-plain", "control socket listening")
    daemons = [("with", with_daemon), ("without", without)]
    if args.bus:
        idle_announced = os.path.join(args.work, "idle-announced.json")
        json.dump(dict(base, device="null", esphome={"listen": "0.0.0.0:0", "encryptionKey": KEY, "name": "Bench"}), open(idle_announced, "w"))
        announced = start(args, idle_announced, "idle-announced", "announced on the network as", {"DBUS_SYSTEM_BUS_ADDRESS": args.bus})
        daemons.append(("announced", announced))
    groups = [own_cgroup(process.pid, name) for name, process in daemons]
    client = APIClient("127.0.0.1", port, None, noise_psk=KEY, client_info="bench")
    await client.connect(login=True)
    await client.list_entities_services()
    client.subscribe_states(lambda state: None)
    await asyncio.sleep(5)
    before = {name: cpu_seconds(process.pid) for name, process in daemons}
    await asyncio.sleep(60)
    after = {name: cpu_seconds(process.pid) for name, process in daemons}
    for name, process in daemons:
        rss, anonymous = memory(process.pid)
        print(f"idle {name}|{rss:.1f}|{anonymous:.1f}|{(after[name] - before[name]):.4f}", flush=True)
    libraries = avahi_only_libraries(os.path.join(args.bin, "jukeboxd"))
    print(f"libraries|{resident_in(without.pid, set(libraries.values())) / 1024:.2f}|{' '.join(libraries)}", flush=True)
    await client.disconnect()
    for _, process in daemons:
        process.terminate()
        process.wait()
    for group in groups:
        if group:
            os.rmdir(group)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--capture", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--bus")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
