#!/bin/sh
# A sound card for tests and benchmarks, with no hardware: a PulseAudio null sink that plays
# in real time, and a capture of everything played to it.
#
#   scripts/pulse-rig.sh start DIR        start PulseAudio in DIR; prints PULSE_SERVER=...
#   scripts/pulse-rig.sh capture DIR FILE record what the sink plays to FILE (raw s16le 44.1 kHz stereo)
#   scripts/pulse-rig.sh stop-capture DIR
#   scripts/pulse-rig.sh stop DIR         end every process the rig started (by pid)
#
# ALSA programs reach the sink through the `pulse` PCM (libasound2-plugins) with
# PULSE_SERVER set as printed. Packages: pulseaudio pulseaudio-utils libasound2-plugins.
set -eu

command=${1:?usage: pulse-rig.sh start|capture|stop-capture|stop DIR [FILE]}
dir=${2:?usage: pulse-rig.sh $command DIR}
server="unix:$dir/native"

# Keep PulseAudio's cookie, state and runtime files inside DIR, away from any user session.
export HOME="$dir/home" PULSE_RUNTIME_PATH="$dir/run" PULSE_STATE_PATH="$dir/state" PULSE_SERVER="$server"

. "$(dirname "$0")/rig-processes.sh"

case $command in
start)
    mkdir -p "$dir/home" "$dir/run" "$dir/state"
    rm -f "$dir/native"
    pulseaudio -n --daemonize=no --use-pid-file=no --exit-idle-time=-1 --disallow-exit --system=false \
        --log-target=stderr --log-level=warning \
        --load="module-null-sink sink_name=jbsink rate=44100 channels=2 format=s16le" \
        --load="module-native-protocol-unix socket=$dir/native auth-anonymous=1" \
        >"$dir/pulseaudio.log" 2>&1 &
    echo $! >"$dir/pulseaudio.pid"
    n=0
    until pactl info >/dev/null 2>&1; do
        n=$((n + 1))
        if [ $n -gt 100 ]; then echo "pulse-rig: PulseAudio did not start; see $dir/pulseaudio.log" >&2; exit 69; fi
        sleep 0.1
    done
    # PulseAudio 16's null sink renders in ~2 s blocks until a low-latency stream asks for
    # less. Keep a silent 20 ms stream attached so playback and capture follow the wall clock.
    pacat -p -d jbsink --latency-msec=20 --raw --format=s16le --rate=44100 --channels=2 /dev/zero \
        >"$dir/pacat.log" 2>&1 &
    echo $! >"$dir/pacat.pid"
    n=0
    while :; do
        latency=$(pactl list sinks 2>/dev/null | sed -n 's/.*Latency: \([0-9]*\) usec.*/\1/p' | head -n 1)
        if [ -n "$latency" ] && [ "$latency" -lt 100000 ] && [ "$latency" -gt 0 ]; then break; fi
        n=$((n + 1))
        if [ $n -gt 100 ]; then echo "pulse-rig: sink latency stayed at ${latency:-?} usec" >&2; exit 69; fi
        sleep 0.1
    done
    echo "PULSE_SERVER=$server"
    ;;
capture)
    file=${3:?usage: pulse-rig.sh capture DIR FILE}
    # A file left by an earlier capture would look like this one had started.
    rm -f "$file"
    parecord -d jbsink.monitor --raw --format=s16le --rate=44100 --channels=2 --latency-msec=20 "$file" \
        >"$dir/parecord.log" 2>&1 &
    echo $! >"$dir/parecord.pid"
    # Recording once the first samples (the monitor's silence) reach the file: from then on
    # nothing played is missed, even on a loaded machine. (Being listed by the server is not
    # enough: the stream may not be recording yet.)
    n=0
    until [ -s "$file" ]; do
        n=$((n + 1))
        if [ $n -gt 500 ]; then echo "pulse-rig: capture did not start; see $dir/parecord.log" >&2; exit 69; fi
        sleep 0.01
    done
    ;;
stop-capture)
    stop_pid parecord
    ;;
stop)
    stop_pid parecord
    stop_pid pacat
    stop_pid pulseaudio
    ;;
*)
    echo "pulse-rig: unknown command $command" >&2
    exit 64
    ;;
esac
