#!/usr/bin/env python3
"""Home Assistant's side of jukeboxd's media player, for the tests: aioesphomeapi, the library
Home Assistant's ESPHome integration uses, run through a list of steps. Each step prints one
JSON line; a failure prints {"error": CLASS, "message": ...} and exits with 1.

    ha-client.py --port 6053 [--key BASE64] [--serve FILE] STEP...
    ha-client.py --discover [--key BASE64] STEP...
    ha-client.py --watch NAME
    ha-client.py --announce NAME

--discover finds the device as Home Assistant does (python-zeroconf, `_esphomelib._tcp`), prints
what it found, and connects to the address and port announced; --watch prints the device's
service being added and removed (its goodbye), and ends once it is gone (60 s at most);
--announce is another device on the network with that name, until it is stopped.

Steps:
  info                     the device's info
  entities                 the entity list
  states                   subscribe to states; prints the first media player state
  volume:0.3               set the volume, and wait for that state
  command:pause            a media player command (play, pause, stop, mute, unmute, toggle)
  wait:paused              wait for a state (idle, playing, paused, announcing), 20 s at most
  play:URL                 play_media with that address
  announce-media:URL       play_media with that address and announcement=True
  announce:URL[|CHIME]     assist_satellite's announce, waiting for the finish (60 s at most)
  sleep:SECONDS            wait
With --serve, @SERVED@ in a step stands for the address of FILE on a server on loopback, and
@MISSING@ for an address on it that answers 404.
"""
import argparse
import asyncio
import functools
import http.server
import json
import os
import sys
import threading

from aioesphomeapi import APIClient, MediaPlayerCommand, MediaPlayerEntityState, MediaPlayerInfo, MediaPlayerState


def say(**fields):
    print(json.dumps(fields), flush=True)


def serve(path):
    """A plain HTTP server on loopback serving the file at /clip and nothing else."""
    body = open(path, "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/clip":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


SERVICE_TYPE = "_esphomelib._tcp.local."


async def browse(on_change):
    """Browses for ESPHome devices as Home Assistant's zeroconf integration does."""
    from zeroconf import ServiceStateChange
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

    zeroconf = AsyncZeroconf()

    def handler(zeroconf, service_type, name, state_change):
        if state_change in (ServiceStateChange.Added, ServiceStateChange.Removed):
            on_change(name, state_change is ServiceStateChange.Added)

    browser = AsyncServiceBrowser(zeroconf.zeroconf, SERVICE_TYPE, handlers=[handler])
    return zeroconf, browser


async def discover():
    """The first device found: its name, IPv4 address, port and TXT fields."""
    from zeroconf.asyncio import AsyncServiceInfo

    found = asyncio.Queue()
    zeroconf, browser = await browse(lambda name, added: added and found.put_nowait(name))
    try:
        name = await asyncio.wait_for(found.get(), 20)
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(zeroconf.zeroconf, 5000):
            raise TimeoutError(f"{name} did not answer")
        host = next(address for address in info.parsed_addresses() if ":" not in address)
        say(step="discovered", name=name, hostname=info.server, host=host, port=info.port, properties=dict(sorted(info.decoded_properties.items())))
        return host, info.port
    finally:
        await browser.async_cancel()
        await zeroconf.async_close()


async def watch(wanted):
    """Prints the device's service added, then removed; ends once it is gone."""
    gone = asyncio.Event()

    def changed(name, added):
        if name == wanted:
            say(step="added" if added else "removed", name=name)
            if not added:
                gone.set()

    zeroconf, browser = await browse(changed)
    try:
        await asyncio.wait_for(gone.wait(), 60)
    finally:
        await browser.async_cancel()
        await zeroconf.async_close()


async def announce(name):
    """Another device on the network named `name`: announced until this ends."""
    import socket

    from zeroconf import ServiceInfo
    from zeroconf.asyncio import AsyncZeroconf

    zeroconf = AsyncZeroconf()
    info = ServiceInfo(SERVICE_TYPE, f"{name}.{SERVICE_TYPE}", addresses=[socket.inet_aton(own_address())], port=6053,
                       properties={"mac": "0200000000aa", "version": "2025.12.0"}, server="another-device.local.")
    await zeroconf.async_register_service(info)
    say(step="announced", name=info.name)
    try:
        await asyncio.Event().wait()
    finally:
        await zeroconf.async_close()


def own_address():
    """This side's IPv4 address on the network (not loopback): where mDNS answers point."""
    import ifaddr

    for adapter in ifaddr.get_adapters():
        for address in adapter.ips:
            if address.is_IPv4 and not address.ip.startswith("127."):
                return address.ip
    raise OSError("no IPv4 address but loopback")


async def run(args):
    if args.watch:
        await watch(args.watch)
        return
    if args.announce:
        await announce(args.announce)
        return
    base = serve(args.serve) if args.serve else None
    host, port = await discover() if args.discover else ("127.0.0.1", args.port)
    client = APIClient(host, port, None, noise_psk=args.key, client_info="jukeboxd tests")
    await client.connect(login=True)
    say(step="connected", api_version=[client.api_version.major, client.api_version.minor])
    info = await client.device_info()
    entities, _ = await client.list_entities_services()
    players = [entity for entity in entities if isinstance(entity, MediaPlayerInfo)]
    key = players[0].key if players else 0
    states = asyncio.Queue()
    latest = {}

    def on_state(state):
        if isinstance(state, MediaPlayerEntityState):
            latest["state"] = state
            states.put_nowait(state)

    def shown(state):
        return {"state": MediaPlayerState(state.state).name.lower(), "volume": round(state.volume, 3), "muted": state.muted}

    async def wait_for(check, seconds=20):
        if "state" in latest and check(latest["state"]):
            return latest["state"]
        async with asyncio.timeout(seconds):
            while True:
                state = await states.get()
                if check(state):
                    return state

    for step in args.steps:
        if base:
            step = step.replace("@SERVED@", base + "/clip").replace("@MISSING@", base + "/missing")
        name, _, value = step.partition(":")
        if name == "info":
            say(step=step, name=info.name, friendly_name=info.friendly_name, mac=info.mac_address, manufacturer=info.manufacturer,
                project_version=info.project_version, voice_assistant_feature_flags=info.voice_assistant_feature_flags,
                api_encryption_supported=info.api_encryption_supported)
        elif name == "entities":
            say(step=step, entities=[{"type": type(entity).__name__, "object_id": entity.object_id, "key": entity.key,
                                      "supports_pause": getattr(entity, "supports_pause", None), "feature_flags": getattr(entity, "feature_flags", None),
                                      "formats": [[f.format, f.sample_rate, f.num_channels, int(f.purpose)] for f in getattr(entity, "supported_formats", [])]}
                                     for entity in entities])
        elif name == "states":
            client.subscribe_states(on_state)
            say(step=step, **shown(await wait_for(lambda state: True)))
        elif name == "volume":
            client.media_player_command(key, volume=float(value))
            say(step=step, **shown(await wait_for(lambda state: abs(state.volume - float(value)) < 0.006)))
        elif name == "command":
            client.media_player_command(key, command=MediaPlayerCommand[value.upper()])
            say(step=step)
        elif name == "wait":
            say(step=step, **shown(await wait_for(lambda state: MediaPlayerState(state.state).name.lower() == value)))
        elif name == "play":
            client.media_player_command(key, media_url=value)
            say(step=step)
        elif name == "announce-media":
            client.media_player_command(key, media_url=value, announcement=True)
            say(step=step)
        elif name == "announce":
            media, _, chime = value.partition("|")
            finished = await client.send_voice_assistant_announcement_await_response(media, 60, preannounce_media_id=chime)
            say(step=step, success=finished.success)
        elif name == "sleep":
            await asyncio.sleep(float(value))
            say(step=step)
        else:
            raise ValueError(f"unknown step {step}")
    await client.disconnect()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--discover", action="store_true")
    parser.add_argument("--watch")
    parser.add_argument("--announce")
    parser.add_argument("--key")
    parser.add_argument("--serve")
    parser.add_argument("steps", nargs="*")
    args = parser.parse_args()
    if args.port is None and not args.discover and not args.watch and not args.announce:
        parser.error("--port, --discover, --watch or --announce is needed")
    try:
        asyncio.run(run(args))
    except Exception as error:  # every failure is the test's to read
        say(error=type(error).__name__, message=str(error))
        sys.exit(1)


if __name__ == "__main__":
    main()
