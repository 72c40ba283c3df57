"""What the bench scripts share: a raw s16le stereo file written in real time (the paced rig's
capture, a snapclient's output) mapped onto the monotonic clock, the first loud sample in it,
a WAV tone, a free loopback port, and a process's CPU time from the scheduler."""
import math, os, socket, struct, time

# The first sample above -26 dBFS counts as sound.
LOUD = int(32768 * 10 ** (-26 / 20))


def clock_offset(path, rate):
    """file seconds = monotonic seconds + offset. The file is appended to in pieces, so the
    largest (frames - clock) offset seen over 0.4 s of polling is taken, right after an append."""
    best = None
    deadline = time.monotonic() + 0.4
    while time.monotonic() < deadline:
        offset = os.path.getsize(path) / 4 / rate - time.monotonic()
        best = offset if best is None else max(best, offset)
        time.sleep(0.002)
    return best


def _left_channel(path, start_frame, window, timeout):
    """Yields (frame, left-channel samples) for each whole run of `window` frames of the file
    from start_frame on, as it is written, until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    with open(path, "rb") as f:
        position = max(start_frame, 0)
        while time.monotonic() < deadline:
            f.seek(position * 4)
            data = f.read(window * 4)
            if len(data) < window * 4:
                time.sleep(0.02)
                continue
            yield position, struct.unpack("<%dh" % (window * 2), data)[::2]
            position += window


def onset(path, start_frame, rate, timeout=15):
    """Seconds into the file of the first loud sample at or after start_frame, or None."""
    for position, left in _left_channel(path, start_frame, rate // 100, timeout):
        for index, sample in enumerate(left):
            if abs(sample) > LOUD:
                return (position + index) / rate
    return None


def quieter(path, start_frame, rate, below, timeout=15):
    """Seconds into the file of the first 10 ms, at or after start_frame, whose loudest sample
    is under `below` (a sound that was louder has been turned down), or None."""
    for position, left in _left_channel(path, start_frame, rate // 100, timeout):
        if max(abs(sample) for sample in left) < below:
            return position / rate
    return None


def tone(path, rate, seconds, frequency=1000, channels=2, amplitude=12000):
    """A 16-bit WAV sine."""
    frames = int(rate * seconds)
    data = b"".join(struct.pack("<h", int(amplitude * math.sin(2 * math.pi * frequency * i / rate))) * channels for i in range(frames))
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16))
        out.write(b"data" + struct.pack("<I", len(data)) + data)


def free_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def cgroup_usage(pid):
    """The CPU time of the cgroup (v2) the process is alone in, in seconds (`cpu.stat`'s
    `usage_usec`: every thread it ever ran, those that have ended too); None when it shares
    its cgroup or there is none (`scripts/bench/music.sh` gives each daemon its own)."""
    try:
        path = next(line[3:].strip() for line in open(f"/proc/{pid}/cgroup") if line.startswith("0::"))
        mount = next(line.split()[1] for line in open("/proc/mounts") if line.split()[2] == "cgroup2")
        folder = mount + path
        if path == "/" or open(folder + "/cgroup.procs").read().split() != [str(pid)]:
            return None
        stat = dict(line.split() for line in open(folder + "/cpu.stat") if line.strip())
        return int(stat["usage_usec"]) / 1e6
    except (OSError, StopIteration, KeyError, ValueError):
        return None


def cpu_seconds(pid):
    """CPU time of a process: its own cgroup's, where it has one (`cgroup_usage`); else its live
    threads' from /proc/PID/task/*/schedstat (the scheduler's own accounting, in ns), and the
    threads that have ended from what /proc/PID/stat counts beyond the live threads' own
    counts (in clock ticks), so a thread that ends between two readings does not take its time
    out of the difference."""
    usage = cgroup_usage(pid)
    if usage is not None:
        return usage
    def ticks(path):
        fields = open(path).read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    total, live_ticks = 0, 0
    process_ticks = ticks(f"/proc/{pid}/stat")
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
            live_ticks += ticks(f"/proc/{pid}/task/{task}/stat")
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9 + max(0, process_ticks - live_ticks) / os.sysconf("SC_CLK_TCK")
