#!/usr/bin/env python3
"""Day plans' calendars, measured with the release jukeboxd (BENCHMARKS.md, "Day plans"):

- expansion: `jukeboxd --check` on a session whose calendar file holds 5 000 events (3 000
  single, all-day and timed; 1 500 weekly with EXDATEs; 400 monthly by ordinal weekday; 100
  daily with COUNT; in a VTIMEZONE), which reads and expands it over 400 days as the daemon
  does, against the same session without the calendar: the difference is the calendar's
  cost (wall clock and CPU, medians of RUNS);
- idle: the daemon for SECONDS with three such calendars, against one without plans and one
  with plans but no calendars: CPU (utime + stime from /proc), voluntary context switches of
  every thread, and resident memory (VmRSS) once it is ready and the calendars are read.

Usage: calendars.py --bin DIR [--runs 5] [--seconds 60]
"""
import argparse, os, random, statistics, struct, subprocess, sys, tempfile, time

SUMMARIES = ["No school", "Late start", "Exam", "Parents' evening", "Sports day", "Trip", "Assembly", "Concert"]

VTIMEZONE = ("BEGIN:VTIMEZONE\r\nTZID:Europe/Amsterdam\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\n"
             "DTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\n"
             "TZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")


def calendar(seed):
    rng = random.Random(seed)
    start = time.gmtime(time.time() - 180 * 86400)
    base = time.mktime((start.tm_year, start.tm_mon, start.tm_mday, 0, 0, 0, 0, 0, -1))
    def day(offset):
        return time.strftime("%Y%m%d", time.localtime(base + offset * 86400))
    events = []
    for index in range(5000):
        summary = rng.choice(SUMMARIES)
        first = rng.randrange(0, 600)
        lines = [f"UID:{seed}-{index}@bench", f"SUMMARY:{summary}"]
        if index < 1500:
            lines += [f"DTSTART;VALUE=DATE:{day(first)}", f"DTEND;VALUE=DATE:{day(first + rng.randint(1, 3))}"]
        elif index < 3000:
            hour = rng.randrange(7, 20)
            lines += [f"DTSTART;TZID=Europe/Amsterdam:{day(first)}T{hour:02d}0000", f"DTEND;TZID=Europe/Amsterdam:{day(first)}T{hour + 1:02d}0000"]
        elif index < 4500:
            lines += [f"DTSTART;TZID=Europe/Amsterdam:{day(first)}T080000", "DURATION:PT1H",
                      f"RRULE:FREQ=WEEKLY;BYDAY={rng.choice(['MO', 'TU', 'WE', 'TH', 'FR'])};UNTIL={day(first + 400)}T000000Z",
                      f"EXDATE;TZID=Europe/Amsterdam:{day(first + 7)}T080000"]
        elif index < 4900:
            lines += [f"DTSTART;VALUE=DATE:{day(first)}", f"RRULE:FREQ=MONTHLY;BYDAY={rng.randint(1, 4)}{rng.choice(['MO', 'WE', 'FR'])}"]
        else:
            lines += [f"DTSTART;VALUE=DATE:{day(first)}", f"RRULE:FREQ=DAILY;COUNT={rng.randint(10, 200)}"]
        events.append("BEGIN:VEVENT\r\n" + "\r\n".join(lines) + "\r\nEND:VEVENT\r\n")
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//jukeboxd//bench//EN\r\n" + VTIMEZONE + "".join(events) + "END:VCALENDAR\r\n"


def wav(path):
    frames = 8000
    with open(path, "wb") as out:
        out.write(b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16))
        out.write(b"data" + struct.pack("<I", frames * 2) + bytes(frames * 2))


def session(path, calendars, plans=True):
    plan_fields = ""
    if plans:
        maps = '{"No school": "none", "Late start": "late", "Exam": "exam"}'
        listed = ", ".join(f'{{"name": "c{i}", "source": "c{i}.ics", "plans": {maps}}}' for i in range(calendars))
        plan_fields = ('"plans": {"regular": [{"at": "08:00", "clip": "a"}, {"at": "12:30", "clip": "a"}], "late": [{"at": "10:00", "clip": "a"}], '
                       '"exam": [{"at": "09:00", "clip": "a"}], "none": []}, "days": [{"plan": "regular", "days": "mon-fri"}], '
                       + (f'"calendars": [{listed}], ' if calendars else ""))
    with open(path, "w") as out:
        out.write('{ "interval": { "min": "1h", "max": "1h" }, ' + plan_fields + '"clips": [ { "file": "a.wav" } ] }')


def check(binary, work, name):
    before = os.times()
    started = time.monotonic()
    result = subprocess.run([os.path.join(binary, "jukeboxd"), os.path.join(work, name), "--check", "--device", "null", "--state", os.path.join(work, "check.json")],
                            capture_output=True, text=True)
    wall = time.monotonic() - started
    after = os.times()
    if result.returncode != 0:
        sys.exit(f"--check failed: {result.stderr}")
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system), result.stdout


def ticks(pid):
    """The process's CPU (its threads', the ended ones' too) and its live threads' voluntary switches."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    total, switches = int(fields[11]) + int(fields[12]), 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            switches += int(next(line for line in open(f"/proc/{pid}/task/{task}/status") if line.startswith("voluntary_ctxt_switches")).split()[1])
        except (FileNotFoundError, StopIteration):
            pass
    return total, switches


def idle(binary, work, name, seconds, calendars):
    daemon = subprocess.Popen([os.path.join(binary, "jukeboxd"), os.path.join(work, name), "--socket", os.path.join(work, f"{name}.sock"),
                               "--state", os.path.join(work, f"{name}-state.json"), "--device", "null"], stderr=subprocess.PIPE, text=True)
    try:
        read = 0
        for line in daemon.stderr:
            if "calendar c" in line and ": read, " in line:
                read += 1
            if "control socket listening" in line and calendars == 0:
                break
            if read == calendars and calendars:
                break
        # The reads are over once the calendars' threads are idle again.
        time.sleep(5)
        rss = int(next(line for line in open(f"/proc/{daemon.pid}/status") if line.startswith("VmRSS:")).split()[1])
        first = ticks(daemon.pid)
        time.sleep(seconds)
        last = ticks(daemon.pid)
        hertz = os.sysconf("SC_CLK_TCK")
        return (last[0] - first[0]) / hertz, (last[1] - first[1]) * 60 / seconds, rss / 1024
    finally:
        daemon.terminate()
        daemon.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="jukebox-calendars-")
    wav(os.path.join(work, "a.wav"))
    for index in range(3):
        with open(os.path.join(work, f"c{index}.ics"), "w", newline="") as out:
            out.write(calendar(index))
    size = os.path.getsize(os.path.join(work, "c0.ics"))
    session(os.path.join(work, "none.json"), 0, plans=False)
    session(os.path.join(work, "plans.json"), 0)
    session(os.path.join(work, "one.json"), 1)
    session(os.path.join(work, "three.json"), 3)

    without = [check(args.bin, work, "plans.json") for _ in range(args.runs)]
    with_one = [check(args.bin, work, "one.json") for _ in range(args.runs)]
    line = next(l for l in with_one[0][2].splitlines() if l.startswith("calendar c0:"))
    wall = statistics.median(w for w, _, _ in with_one) - statistics.median(w for w, _, _ in without)
    cpu = statistics.median(c for _, c, _ in with_one) - statistics.median(c for _, c, _ in without)
    print(f"calendar of 5 000 events ({size / 1024:.0f} KiB): {line.split(': ', 2)[2]}")
    print(f"reading and expanding it over 400 days (--check with it, less without; median of {args.runs}): wall {wall:.3f} s, CPU {cpu:.3f} s")

    for name, calendars, what in [("none.json", 0, "no plans"), ("plans.json", 0, "plans, no calendars"), ("three.json", 3, "three 5 000-event calendars")]:
        cpu, switches, rss = idle(args.bin, work, name, args.seconds, calendars)
        print(f"idle {args.seconds} s, {what}: CPU {cpu:.2f} s, {switches:.0f} voluntary switches a minute, RSS {rss:.1f} MB")


if __name__ == "__main__":
    main()
