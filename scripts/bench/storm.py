#!/usr/bin/env python3
"""Enqueue storm: CLIENTS connections at once, each pipelining COUNT enqueues, against
jukeboxd's control socket (JSON-RPC, one object per line) or MPD's protocol (`add`).

Prints one JSON line: enqueues per second, how many were acknowledged, refused or lost, and
whether every client's acknowledged entries kept that client's order in the queue.

  storm.py jukebox SOCKET CLIP CLIENTS COUNT
  storm.py mpd HOST:PORT FILE CLIENTS COUNT
"""
import json
import socket
import sys
import threading
import time


def jukebox_client(path, clip, count, index, barrier, result):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    requests = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "enqueue",
                    "params": {"clips": [clip], "client": f"storm-{index}"}}) + "\n"
        for i in range(count)).encode()
    barrier.wait()
    sock.sendall(requests)
    reader = sock.makefile("rb")
    tickets, refused = [], 0
    for _ in range(count):
        reply = json.loads(reader.readline())
        if "result" in reply:
            tickets.append(reply["result"]["entries"][0]["ticket"])
        else:
            refused += 1
    result[index] = (tickets, refused)
    sock.close()


def mpd_client(address, file, count, index, barrier, result):
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    reader = sock.makefile("rb")
    reader.readline()  # OK MPD <version>
    requests = "".join(f'addid "{file}"\n' for _ in range(count)).encode()
    barrier.wait()
    sock.sendall(requests)
    ids, refused = [], 0
    for _ in range(count):
        line = reader.readline()
        if line.startswith(b"Id: "):
            ids.append(int(line[4:]))
            reader.readline()  # OK
        else:
            refused += 1
    result[index] = (ids, refused)
    sock.close()


def queue_ids(kind, target):
    if kind == "jukebox":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(target)
        sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"queue"}\n')
        reply = json.loads(sock.makefile("rb").readline())
        return [entry["ticket"] for entry in reply["result"]["waiting"]]
    host, port = target.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    reader = sock.makefile("rb")
    reader.readline()
    sock.sendall(b"playlistinfo\n")
    ids = []
    for line in reader:
        if line.startswith(b"Id: "):
            ids.append(int(line[4:]))
        if line.startswith(b"OK") or line.startswith(b"ACK"):
            break
    return ids


def main():
    kind, target, item, clients, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    worker = jukebox_client if kind == "jukebox" else mpd_client
    barrier = threading.Barrier(clients + 1)
    result = [None] * clients
    threads = [threading.Thread(target=worker, args=(target, item, count, i, barrier, result)) for i in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.monotonic()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    acknowledged = [ticket for tickets, _ in result for ticket in tickets]
    in_queue = queue_ids(kind, target)
    position = {ticket: i for i, ticket in enumerate(in_queue)}
    lost = sum(1 for ticket in acknowledged if ticket not in position)
    ordered = all(
        all(position.get(a, -1) < position.get(b, -1) for a, b in zip(tickets, tickets[1:]))
        for tickets, _ in result)
    print(json.dumps({
        "kind": kind, "clients": clients, "per_client": count, "seconds": round(elapsed, 4),
        "per_second": round(len(acknowledged) / elapsed), "acknowledged": len(acknowledged),
        "refused": sum(refused for _, refused in result), "lost": lost, "order_kept": ordered}))


main()
