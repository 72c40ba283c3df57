#!/usr/bin/env python3
"""Home Assistant's media player, measured (run by scripts/bench/esphome.sh, with the python of
scripts/esphome/client-venv.sh, which has aioesphomeapi):

  announce  a quiet 60 s clip plays; aioesphomeapi sends `play_media` with `announce: true`
            for a loud 1 s WAV served on loopback (as Home Assistant's media proxy serves it);
            the time from just before the command is sent to the first loud sample in the paced
            sink's capture (jukeboxd fetches, decodes whole, cuts in). Beside it, in the same run,
            `jukebox play --now` of the same file, already in the session.
  idle      two daemons on the null device, one with the `esphome` section and Home Assistant
            connected and subscribed (it pings every 20 s), one without: resident and anonymous
            memory, and CPU over 60 s (the scheduler's accounting, every thread).
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


def start(args, session, name, wanted):
    daemon = subprocess.Popen(
        [os.path.join(args.bin, "jukeboxd"), session, "--socket", os.path.join(args.work, name + ".sock"),
         "--state", os.path.join(args.work, name + ".state.json")], stderr=subprocess.PIPE, text=True)
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
    groups = [own_cgroup(with_daemon.pid, "with"), own_cgroup(without.pid, "without")]
    client = APIClient("127.0.0.1", port, None, noise_psk=KEY, client_info="bench")
    await client.connect(login=True)
    await client.list_entities_services()
    client.subscribe_states(lambda state: None)
    await asyncio.sleep(5)
    before = {name: cpu_seconds(process.pid) for name, process in (("with", with_daemon), ("without", without))}
    await asyncio.sleep(60)
    after = {name: cpu_seconds(process.pid) for name, process in (("with", with_daemon), ("without", without))}
    for name, process in (("with", with_daemon), ("without", without)):
        rss, anonymous = memory(process.pid)
        print(f"idle {name}|{rss:.1f}|{anonymous:.1f}|{(after[name] - before[name]):.4f}", flush=True)
    await client.disconnect()
    for process in (with_daemon, without):
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
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
