# Shared by the test rigs (scripts/pulse-rig.sh, scripts/mdns-rig.sh), sourced: the processes a
# rig starts, each with its pid in DIR/NAME.pid, and how they are stopped.

# Whether a process is there and has not exited. The rig's processes outlive the shell that
# started them, so init reaps them, and some inits (a container's) do so only every second or
# two: until then the exited process is a zombie, which `kill -0` still finds.
running() {
    [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]
}

# stop_pid NAME: ends the process of $dir/NAME.pid and waits for it to go, so the next start
# does not find its socket in use.
stop_pid() {
    [ -f "$dir/$1.pid" ] || return 0
    pid=$(cat "$dir/$1.pid")
    kill "$pid" 2>/dev/null || true
    n=0
    while running "$pid" && [ $n -lt 500 ]; do sleep 0.01; n=$((n + 1)); done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$1.pid"
}
