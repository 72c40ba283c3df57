#!/usr/bin/env bash
# Side-by-side benchmarks: jukeboxd, MPD (+ mpc) and aplay on the same clips, on the same
# real-time paced sound card (scripts/pulse-rig.sh), in one run. Writes BENCHMARKS.md with
# medians and ratios. Installs MPD, mpc, hyperfine and the rig's packages if missing.
#
#   scripts/bench-compare.sh [RUNS]      (RUNS per figure, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
runs=${1:-5}
scripts/install-deps.sh pulseaudio pulseaudio-utils libasound2-plugins libasound2-dev mpd mpc hyperfine sox python3 bc
# Built as docs/raspberry-pi.md installs it: release, with the Swift runtime linked in.
build=(swift build -c release --static-swift-stdlib --scratch-path .build-static)
"${build[@]}" --product jukeboxd >/dev/null
"${build[@]}" --product jukebox >/dev/null
bin=$("${build[@]}" --show-bin-path)

work=$(mktemp -d /tmp/jukebox-bench-XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    scripts/pulse-rig.sh stop "$work/pulse" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The tracer preloaded into every player for the latency figures (scripts/bench/latency.py);
# the Swift toolchain's own clang builds it, so no other compiler is needed.
"$(dirname "$(command -v swiftc)")/clang" -O2 -shared -fPIC -o "$work/pcm-trace.so" scripts/bench/pcm-trace.c -ldl
latency() { python3 scripts/bench/latency.py "$@"; }

eval "export $(scripts/pulse-rig.sh start "$work/pulse")"
export HOME="$work/pulse/home"

# The same clips for every player: a 10 s tone, and two 1 s tones for the gap between clips.
mkdir -p "$work/music"
sox -n -r 44100 -c 2 -b 16 "$work/music/ten.wav" synth 10 sine 440 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$work/music/a.wav" synth 1 sine 500 vol 0.5
sox -n -r 44100 -c 2 -b 16 "$work/music/b.wav" synth 1 sine 800 vol 0.5
cat >"$work/session.json" <<JSON
{ "name": "bench", "device": "pulse", "clipsDirectory": "music", "interval": { "min": "1h", "max": "1h" },
  "clips": [ { "file": "ten.wav" }, { "file": "a.wav" }, { "file": "b.wav" } ] }
JSON
# Every MPD plays through the rig, as the others do.
rig_output='audio_output {
    type "alsa"
    name "rig"
    device "pulse"
    mixer_type "none"
}'
# MPD as Debian sets it up (its /etc/mpd.conf: the curl input, two decoders off, UTF-8 file
# names), with the paths moved into the bench's folder, no user switch, a port of its own,
# the rig's ALSA output, and room for the storm's 40 000 entries.
mpd_conf=/etc/mpd.conf
[ -r "$mpd_conf" ] || { echo "bench-compare: $mpd_conf is missing (the mpd package installs it)" >&2; exit 69; }
{
    grep -Ev '^[[:space:]]*(music_directory|playlist_directory|db_file|log_file|pid_file|state_file|sticker_file|user|group|bind_to_address|port|max_playlist_length)[[:space:]]' "$mpd_conf"
    cat <<CONF
music_directory "$work/music"
playlist_directory "$work"
db_file "$work/mpd.db"
state_file "$work/mpd.state"
pid_file "$work/mpd.pid"
bind_to_address "127.0.0.1"
port "6611"
max_playlist_length "40000"
$rig_output
CONF
} >"$work/mpd.conf"
# MPD as lean as it runs: only what it needs to play files from a folder, on a Unix socket,
# with no database update at start and no zeroconf, and the same output. A user who wants a
# small player runs this one, so jukeboxd's memory is set beside it too.
cat >"$work/mpd-min.conf" <<CONF
music_directory "$work/music"
playlist_directory "$work"
db_file "$work/mpd-min.db"
state_file "$work/mpd-min.state"
pid_file "$work/mpd-min.pid"
log_file "$work/mpd-min.log"
bind_to_address "$work/mpd-min.sock"
user "$(id -un)"
auto_update "no"
zeroconf_enabled "no"
$rig_output
CONF
socket="$work/jukeboxd.sock"
jukebox() { "$bin/jukebox" --socket "$socket" "$@"; }
mpc() { command mpc -p 6611 "$@"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rss_mb() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# Memory the process holds that the kernel cannot drop and read back from a file: heap,
# stacks and written pages (copy-on-write pages of a file mapping count here too). The rest
# of RSS is clean pages of the binary and libraries.
anon_mb() { awk '/^RssAnon/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# CPU time of every thread of a process, in seconds (from the scheduler's own accounting, in ns).
cpu_s() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { printf "%.4f", t / 1e9 }'; }

# Set `traced=1` to start the players with the tracer preloaded.
traced=0
trace_env() { if [ "$traced" = 1 ]; then echo "LD_PRELOAD=$work/pcm-trace.so PCM_TRACE=$work/trace.$1"; fi; }
start_jukeboxd() {
    rm -f "$work/state.json"
    env $(trace_env jukeboxd) "$bin/jukeboxd" "$work/session.json" --socket "$socket" --state "$work/state.json" --queue-limit 40000 --log-level warning 2>>"$work/jukeboxd.log" &
    jpid=$!
    pids+=("$jpid")
    until [ -S "$socket" ] && jukebox status >/dev/null 2>&1; do sleep 0.05; done
}
stop_jukeboxd() { kill "$jpid"; wait "$jpid" 2>/dev/null || true; }
start_mpd() {
    rm -f "$work/mpd.state"
    env $(trace_env mpd) mpd --no-daemon "$work/mpd.conf" 2>>"$work/mpd.log" &
    mpid=$!
    pids+=("$mpid")
    until mpc status >/dev/null 2>&1; do sleep 0.05; done
    mpc update --wait >/dev/null
}
stop_mpd() { kill "$mpid"; wait "$mpid" 2>/dev/null || true; }
mpc_min() { command mpc -h "$work/mpd-min.sock" "$@"; }
start_mpd_min() {
    rm -f "$work/mpd-min.state"
    mpd --no-daemon "$work/mpd-min.conf" 2>>"$work/mpd-min.stderr" &
    lpid=$!
    pids+=("$lpid")
    until mpc_min status >/dev/null 2>&1; do sleep 0.05; done
    mpc_min update --wait >/dev/null
}
stop_mpd_min() { kill "$lpid"; wait "$lpid" 2>/dev/null || true; }
# Private memory: what the process holds that no other process shares (smaps_rollup).
private_mb() { awk '/^Private_(Clean|Dirty):/ { t += $2 } END { printf "%.1f", t / 1024 }' "/proc/$1/smaps_rollup"; }
wait_jukebox_idle() { while jukebox --json status | grep -q '"playing"'; do sleep 0.1; done; }
wait_mpd_stopped() { while mpc status | grep -q '^\[playing\]'; do sleep 0.1; done; }

declare -A figure
echo "idle RSS…" >&2
for i in $(seq "$runs"); do
    start_jukeboxd; sleep 2; rss_mb "$jpid" >>"$work/rss.jukeboxd"; echo >>"$work/rss.jukeboxd"
    anon_mb "$jpid" >>"$work/anon.jukeboxd"; echo >>"$work/anon.jukeboxd"; stop_jukeboxd
    start_mpd; sleep 2; rss_mb "$mpid" >>"$work/rss.mpd"; echo >>"$work/rss.mpd"
    anon_mb "$mpid" >>"$work/anon.mpd"; echo >>"$work/anon.mpd"; stop_mpd
done
for i in $(seq "$runs"); do
    start_mpd_min; sleep 2; rss_mb "$lpid" >>"$work/rss.mpd-min"; echo >>"$work/rss.mpd-min"
    anon_mb "$lpid" >>"$work/anon.mpd-min"; echo >>"$work/anon.mpd-min"; stop_mpd_min
done
figure[rss_l]=$(median <"$work/rss.mpd-min"); figure[anon_l]=$(median <"$work/anon.mpd-min")
figure[rss_j]=$(median <"$work/rss.jukeboxd"); figure[rss_m]=$(median <"$work/rss.mpd")
figure[anon_j]=$(median <"$work/anon.jukeboxd"); figure[anon_m]=$(median <"$work/anon.mpd")

echo "CPU, onset, memory and wake-ups, side by side (scripts/bench/players.py)…" >&2
# Onsets spread over about 50 ms for every player alike (the null sink renders in pieces), so
# medians of many plays are compared.
onset_runs=25
start_jukeboxd; start_mpd
scripts/pulse-rig.sh capture "$work/pulse" "$work/players.raw"
python3 scripts/bench/players.py --bin "$bin" --jukeboxd-pid "$jpid" --mpd-pid "$mpid" --socket "$socket" \
    --music "$work/music" --capture "$work/players.raw" --runs "$onset_runs" | tee "$work/players.txt" >&2
scripts/pulse-rig.sh stop-capture "$work/pulse"
rm -f "$work/players.raw"
# `players NAME FIELD`: 2 median, 3 min, 4 max (memory: 2 RSS, 3 private; wakeups: 2 jukeboxd, 3 MPD).
players() { grep "^$1|" "$work/players.txt" | cut -d'|' -f"$2"; }


echo "CLI round trip…" >&2
hyperfine -N --warmup 10 --runs 100 --export-json "$work/cli.json" \
    "$bin/jukebox --socket $socket status" "mpc -p 6611 status" >/dev/null 2>&1
read -r figure[cli_j] figure[cli_m] < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]; print(" ".join("%.2f" % (x["median"] * 1000) for x in r))' "$work/cli.json")

echo "silence between same-format clips…" >&2
for i in $(seq "$runs"); do
    scripts/pulse-rig.sh capture "$work/pulse" "$work/gap.jukeboxd.raw"
    jukebox play a b >/dev/null; sleep 0.2; wait_jukebox_idle; sleep 0.6
    scripts/pulse-rig.sh stop-capture "$work/pulse"
    latency gap "$work/gap.jukeboxd.raw" >>"$work/gap.jukeboxd"
    mpc clear >/dev/null; mpc add a.wav >/dev/null; mpc add b.wav >/dev/null
    scripts/pulse-rig.sh capture "$work/pulse" "$work/gap.mpd.raw"
    mpc play >/dev/null; sleep 0.2; wait_mpd_stopped; sleep 0.6
    scripts/pulse-rig.sh stop-capture "$work/pulse"
    latency gap "$work/gap.mpd.raw" >>"$work/gap.mpd"
done
figure[gap_j]=$(median <"$work/gap.jukeboxd"); figure[gap_m]=$(median <"$work/gap.mpd")

echo "enqueue storm…" >&2
jukebox pause >/dev/null
for i in $(seq "$runs"); do
    jukebox clear >/dev/null
    scripts/bench/storm.py jukebox "$socket" ten 32 1000 >>"$work/storm.jukeboxd.json"
    mpc clear >/dev/null
    scripts/bench/storm.py mpd 127.0.0.1:6611 ten.wav 32 1000 >>"$work/storm.mpd.json"
done
jukebox clear >/dev/null; mpc clear >/dev/null
storm() { python3 -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rates = sorted(r["per_second"] for r in rows)
print(rates[len(rates) // 2], sum(r["lost"] for r in rows), all(r["order_kept"] for r in rows), sum(r["refused"] for r in rows))' "$1"; }
read -r figure[storm_j] figure[storm_j_lost] figure[storm_j_order] figure[storm_j_refused] < <(storm "$work/storm.jukeboxd.json")
read -r figure[storm_m] figure[storm_m_lost] figure[storm_m_order] figure[storm_m_refused] < <(storm "$work/storm.mpd.json")
stop_jukeboxd; stop_mpd

echo "the minimal MPD's memory after playing…" >&2
# The same clip as players.py plays, through the same output; memory read once it has ended.
# Alone: beside Debian's MPD, the libraries both map would count as shared, not private.
start_mpd_min
for i in $(seq "$runs"); do
    mpc_min clear >/dev/null; mpc_min add ten.wav >/dev/null; mpc_min play >/dev/null
    sleep 1; while mpc_min status | grep -q '^\[playing\]'; do sleep 0.2; done
done
figure[mem_l]=$(rss_mb "$lpid"); figure[private_l]=$(private_mb "$lpid")
stop_mpd_min

echo "first frame and skip latency…" >&2
traced=1
start_jukeboxd; start_mpd
# The first play after jukeboxd starts also loads ALSA's pulse plugin and its libraries
# (aplay loads them on every run); it is reported on its own, and the runs measure a daemon
# that has been up for a while, which is how it runs.
sleep 1
latency stamp "$work/stamp" -- "$bin/jukebox" --socket "$socket" play a >/dev/null
figure[first_cold]=$(latency first-frame "$work/trace.jukeboxd" "$work/stamp")
wait_jukebox_idle
for i in $(seq "$runs"); do
    # From the command's start to the player's first snd_pcm_writei, on a closed device:
    # jukeboxd closes it 5 s after the last clip (keepDeviceOpen "idle"), so wait that out.
    sleep 6
    latency stamp "$work/stamp" -- "$bin/jukebox" --socket "$socket" play a >/dev/null
    latency first-frame "$work/trace.jukeboxd" "$work/stamp" >>"$work/first.jukeboxd"
    env $(trace_env aplay) python3 scripts/bench/latency.py stamp "$work/stamp" -- aplay -q -D pulse "$work/music/a.wav"
    latency first-frame "$work/trace.aplay" "$work/stamp" >>"$work/first.aplay"
    mpc clear >/dev/null; mpc add a.wav >/dev/null
    latency stamp "$work/stamp" -- mpc -q -p 6611 play
    latency first-frame "$work/trace.mpd" "$work/stamp" >>"$work/first.mpd"
    wait_jukebox_idle; wait_mpd_stopped

    # From the start of `jukebox skip` (`mpc next`) to the end of the clip's sound in the
    # capture. The skipped clip is the last queued, so silence follows.
    scripts/pulse-rig.sh capture "$work/pulse" "$work/skip.raw"
    jukebox play ten >/dev/null; sleep 2
    latency stamp "$work/stamp" -- "$bin/jukebox" --socket "$socket" skip >/dev/null; sleep 1
    scripts/pulse-rig.sh stop-capture "$work/pulse"
    latency skip "$work/skip.raw" "$work/trace.jukeboxd" "$work/stamp" >>"$work/skip.jukeboxd"
    latency cut "$work/trace.jukeboxd" "$work/stamp" >>"$work/cut.jukeboxd"
    mpc clear >/dev/null; mpc add ten.wav >/dev/null
    scripts/pulse-rig.sh capture "$work/pulse" "$work/skip.raw"
    mpc play >/dev/null; sleep 2
    latency stamp "$work/stamp" -- mpc -q -p 6611 next; sleep 1
    scripts/pulse-rig.sh stop-capture "$work/pulse"
    latency skip "$work/skip.raw" "$work/trace.mpd" "$work/stamp" >>"$work/skip.mpd"
    latency cut "$work/trace.mpd" "$work/stamp" >>"$work/cut.mpd"
done
stop_jukeboxd; stop_mpd
traced=0
for f in first.jukeboxd first.aplay first.mpd skip.jukeboxd skip.mpd cut.jukeboxd cut.mpd; do
    figure[$f]=$(median <"$work/$f")
done

echo "in-process benchmarks…" >&2
inprocess=$(cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --format markdown --no-progress 2>/dev/null | sed -n '/^## /,$p' || echo "(the Benchmarks package did not run)")

ratio() { echo "scale=2; $1 / $2" | bc; }
met() { if [ "$(echo "$1" | bc)" = 1 ]; then echo "met"; else echo "**not met**"; fi; }
{
    echo "<!-- From here to the end marker, scripts/bench-compare.sh writes this file afresh. -->"
    echo "# Benchmarks"
    echo
    echo "jukeboxd, MPD $(mpd --version | head -n 1 | awk '{ print $NF }') with mpc, and aplay, on the same clips and the same"
    echo "real-time paced sound card (a PulseAudio null sink, scripts/pulse-rig.sh), in one run on"
    echo "$(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d). Medians of $runs runs (CPU: $(( onset_runs / 3 )) runs; onsets: $onset_runs; CLI: 100 runs after 10 warm-ups)."
    echo
    echo "Reproduce: \`scripts/bench-compare.sh $runs\`"
    echo
    echo "| figure | jukeboxd | anchor | ratio | target | |"
    echo "|---|---|---|---|---|---|"
    echo "| idle daemon RSS | ${figure[rss_j]} MB | MPD ${figure[rss_m]} MB | $(ratio "${figure[rss_j]}" "${figure[rss_m]}") × MPD | ≤ 0.6 × MPD | $(met "${figure[rss_j]} <= 0.6 * ${figure[rss_m]}") |"
    echo "| idle daemon RSS, against MPD with a minimal configuration | ${figure[rss_j]} MB | minimal MPD ${figure[rss_l]} MB | $(ratio "${figure[rss_j]}" "${figure[rss_l]}") × minimal MPD | reported | |"
    echo "| idle daemon anonymous memory (heap, stacks, written pages) | ${figure[anon_j]} MB | MPD ${figure[anon_m]} MB, minimal MPD ${figure[anon_l]} MB | $(ratio "${figure[anon_j]}" "${figure[anon_m]}") × MPD, $(ratio "${figure[anon_j]}" "${figure[anon_l]}") × minimal MPD | | |"
    cj=$(players "cpu jukeboxd" 2); ca=$(players "cpu aplay" 2); cm=$(players "cpu mpd" 2)
    echo "| CPU to play a 10 s 44.1 kHz stereo WAV (median; min–max) | $cj s ($(players "cpu jukeboxd" 3)–$(players "cpu jukeboxd" 4)) | aplay $ca s ($(players "cpu aplay" 3)–$(players "cpu aplay" 4)), MPD $cm s ($(players "cpu mpd" 3)–$(players "cpu mpd" 4)) | $(ratio "$cj" "$ca") × aplay, $(ratio "$cj" "$cm") × MPD | ≤ aplay (stretch ≤ MPD) | $(met "$cj <= $ca") |"
    oc=$(players "onset jukeboxd closed" 2); oo=$(players "onset jukeboxd open" 2); oa=$(players "onset aplay" 2); om=$(players "onset mpd" 2)
    echo "| command → first sound in the capture, device closed (median of $onset_runs; min–max) | $oc ms ($(players "onset jukeboxd closed" 3)–$(players "onset jukeboxd closed" 4)) | aplay $oa ms ($(players "onset aplay" 3)–$(players "onset aplay" 4)), \`mpc play\` $om ms ($(players "onset mpd" 3)–$(players "onset mpd" 4)) | $(ratio "$oc" "$oa") × aplay, $(ratio "$oc" "$om") × MPD | ≤ aplay and ≤ 1.2 × MPD | $(met "$oc <= $oa && $oc <= 1.2 * $om") |"
    echo "| command → first sound in the capture, device idle but open | $oo ms ($(players "onset jukeboxd open" 3)–$(players "onset jukeboxd open" 4)) | | $(ratio "$oo" "$oa") × aplay, $(ratio "$oo" "$om") × MPD | ≤ aplay and ≤ 1.2 × MPD | $(met "$oo <= $oa && $oo <= 1.2 * $om") |"
    echo "| resident memory after playing | $(players "memory jukeboxd" 2) MB | MPD $(players "memory mpd" 2) MB | $(ratio "$(players "memory jukeboxd" 2)" "$(players "memory mpd" 2)") × MPD | ≤ 0.6 × MPD | $(met "$(players "memory jukeboxd" 2) <= 0.6 * $(players "memory mpd" 2)") |"
    echo "| private memory after playing (Private_Clean + Private_Dirty) | $(players "memory jukeboxd" 3) MB | MPD $(players "memory mpd" 3) MB | $(ratio "$(players "memory jukeboxd" 3)" "$(players "memory mpd" 3)") × MPD | ≤ 0.5 × MPD | $(met "$(players "memory jukeboxd" 3) <= 0.5 * $(players "memory mpd" 3)") |"
    echo "| resident memory after playing, against MPD with a minimal configuration | $(players "memory jukeboxd" 2) MB | minimal MPD ${figure[mem_l]} MB | $(ratio "$(players "memory jukeboxd" 2)" "${figure[mem_l]}") × minimal MPD | reported | |"
    echo "| private memory after playing, against MPD with a minimal configuration | $(players "memory jukeboxd" 3) MB | minimal MPD ${figure[private_l]} MB | $(ratio "$(players "memory jukeboxd" 3)" "${figure[private_l]}") × minimal MPD | reported | |"
    echo "| idle wake-ups per minute (context switches, every thread) | $(players wakeups 2) | MPD $(players wakeups 3) | | ≤ 60 | $(met "$(players wakeups 2) <= 60") |"
    echo "| CLI round trip (\`status\`) | ${figure[cli_j]} ms | \`mpc status\` ${figure[cli_m]} ms | $(ratio "${figure[cli_j]}" "${figure[cli_m]}") × mpc | ≤ 1.5 × mpc | $(met "${figure[cli_j]} <= 1.5 * ${figure[cli_m]}") |"
    echo "| silence between two same-format clips | ${figure[gap_j]} frames | MPD ${figure[gap_m]} frames | | 0 frames | $(met "${figure[gap_j]} == 0") |"
    echo "| from \`jukebox play\` to the first frame reaching ALSA (an internal figure: not yet heard) | ${figure[first.jukeboxd]} ms (first play after start ${figure[first_cold]} ms) | aplay ${figure[first.aplay]} ms, \`mpc play\` ${figure[first.mpd]} ms | $(ratio "${figure[first.jukeboxd]}" "${figure[first.aplay]}") × aplay | ≤ aplay | $(met "${figure[first.jukeboxd]} <= ${figure[first.aplay]}") |"
    echo "| from \`jukebox skip\` to silence | ${figure[skip.jukeboxd]} ms (cut called at ${figure[cut.jukeboxd]} ms) | \`mpc next\` ${figure[skip.mpd]} ms (cut at ${figure[cut.mpd]} ms) | | ≤ 50 ms | $(met "${figure[skip.jukeboxd]} <= 50 && ${figure[cut.jukeboxd]} <= 50") |"
    vj=$(players "volume jukeboxd" 2)
    echo "| from \`jukebox volume 20\` to the change heard (median; min–max) | $vj ms ($(players "volume jukeboxd" 3)–$(players "volume jukeboxd" 4)) | | | reported: the device's 500 ms buffer, then the sound server's latency | |"
    echo "| enqueue storm, 32 clients × 1 000 pipelined | ${figure[storm_j]}/s, ${figure[storm_j_lost]} lost, order kept: ${figure[storm_j_order]} | MPD \`addid\` ${figure[storm_m]}/s, ${figure[storm_m_lost]} lost | $(ratio "${figure[storm_j]}" "${figure[storm_m]}") × MPD | ≥ 10 000/s, 0 lost | $(met "${figure[storm_j]} >= 10000 && ${figure[storm_j_lost]} == 0") |"
    echo
    echo "- jukeboxd answers each enqueue only after the queue is on disk (fsync); MPD answers at"
    echo "  once and saves its state file every few minutes."
    echo "- Both queues are allowed 40 000 entries for the storm (jukeboxd \`--queue-limit 40000\`, MPD"
    echo "  \`max_playlist_length\`); refused in this run: ${figure[storm_j_refused]}."
    echo "- MPD is Debian's, run with Debian's own /etc/mpd.conf (its paths moved into the bench's"
    echo "  folder, the rig's ALSA output added). Its RSS is nearly all pages of the ~200 shared"
    echo "  libraries it links (libcrypto, librsvg, ICU, libavcodec…), touched as they load; neither"
    echo "  \`max_playlist_length\`, the database update nor Debian's settings change it by more than"
    echo "  0.3 MB. Trixie's MPD 0.24.4, as a Pi runs it, measured the same way in a trixie root:"
    echo "  75.1 MB idle, 77.7 MB after playing (by hand, 2026-11-24; bookworm's 0.23.12 beside it:"
    echo "  49.9 and 51.4 MB)."
    echo "- The minimal MPD is the same MPD with only what it needs to play files from a folder:"
    echo "  its paths, a Unix socket, its user, \`auto_update \"no\"\`, \`zeroconf_enabled \"no\"\` and the"
    echo "  same output; nothing of Debian's configuration (no curl input, no decoders turned off)."
    echo "- Most of jukeboxd's RSS is clean pages of its own binary (the Swift runtime and libraries"
    echo "  are linked in), mapped in 64 KB runs around each page the code touches; anonymous memory is"
    echo "  what the process holds beyond what the kernel can drop and read back from its files."
    echo "- The CLI round trip is mostly the client starting: a static Swift program that prints"
    echo "  nothing takes 0.7 ms here. \`jukebox status\` reads its result without \`Decodable\`"
    echo "  and its options without ArgumentParser's property wrappers, whose first use makes the"
    echo "  runtime look up every generic type they instantiate across every conformance in the"
    echo "  binary (callgrind: 2.96 M instructions before, 0.87 M after)."
    echo "- Latencies are timed from outside the players: scripts/bench/pcm-trace.c, preloaded into"
    echo "  jukeboxd, MPD and aplay alike, notes when each first calls \`snd_pcm_writei\` after an open"
    echo "  or a drop, and when it calls \`snd_pcm_drop\` (the cut); scripts/bench/latency.py notes the"
    echo "  same clock just before it execs the command being timed. Silence is found in the capture of"
    echo "  the paced sink, placed on that clock by where the clip's sound starts (its first write), so"
    echo "  both ends pass through the sink's latency. That latency is a few ms longer when a stream"
    echo "  starts than when it is flushed, so silence can come out before the cut call: read the"
    echo "  two together, with the cut call as the exact figure."
    echo "- Where jukeboxd's CPU goes while it plays: see \"Where playing's CPU goes\" below. Nearly"
    echo "  all of it is waking threads, not work on samples: at unity gain nothing touches a sample."
    echo "  So the player hands the device a second at a time (\`AudioSink.blockDuration\`), which"
    echo "  its thread feeds into a 500 ms buffer of four periods as room appears, and the decoder"
    echo "  reads a second ahead. MPD's one output thread decodes and writes with no hop between"
    echo "  threads, which is why it can go lower still."
    echo "- The volume figure is the device's buffer: the pulse plugin cannot take back what it"
    echo "  holds, so a change is heard once that has played (a ramp over the fade's length follows)."
    echo "- Idle wake-ups: 60 a minute are libdispatch's own. On Linux it watches its thread pool"
    echo "  with a timer that fires once a second on its manager thread, for the life of any"
    echo "  process that has run work on a Dispatch queue (swift-corelibs-libdispatch,"
    echo "  src/event/workqueue.c, \`_dispatch_workq_monitor_pools\`); Swift concurrency runs on"
    echo "  those queues, so no Swift 6 daemon on Linux goes below it without replacing the global"
    echo "  executor (experimental in Swift 6.3). jukeboxd itself sets no timer while idle: the"
    echo "  control socket's idle sweep waits for a client, and the web remote makes its Date header"
    echo "  per response rather than with Hummingbird's once-a-second date cache."
    echo "- CPU, onset, memory and wake-ups are measured by scripts/bench/players.py, as it describes:"
    echo "  aplay's CPU from the kernel's rusage of the child (wait4), a daemon's from"
    echo "  /proc/PID/task/*/schedstat from just after the command until the clip has played, with"
    echo "  nothing polling it; onset is the first sample above -26 dBFS in the sink's capture, from"
    echo "  the moment the command is started."
    echo
    echo "<!-- End of what scripts/bench-compare.sh writes. -->"
} >"$work/generated.md"
{
    echo "## In-process (package-benchmark, \`cd Benchmarks && swift package benchmark\`)"
    echo
    echo "$inprocess"
} >"$work/inprocess.md"
# The sections written by hand (uploads, the HTTP API, memory, MQTT, Snapcast) are kept.
python3 - "$work/generated.md" "$work/inprocess.md" <<'PY'
import sys
generated, inprocess = (open(path).read() for path in sys.argv[1:3])
try:
    text = open("BENCHMARKS.md").read()
except FileNotFoundError:
    text = ""
begin, end = "<!-- From here", "<!-- End of what scripts/bench-compare.sh writes. -->"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    middle = rest.split(end, 1)[1]
else:
    head, middle = "", "\n"
middle = middle.split("## In-process (package-benchmark", 1)[0]
open("BENCHMARKS.md", "w").write(head + generated + middle.rstrip("\n") + "\n\n" + inprocess)
PY
# bc prints ".5" for 0.5.
sed -i 's/\([ |]\)\.\([0-9]\)/\10.\2/g' BENCHMARKS.md
echo "wrote BENCHMARKS.md" >&2
