#!/usr/bin/env bash
# Runs the aarch64 build (scripts/cross-build.sh) under qemu-user against its trixie arm64
# sysroot, and the x86_64 debug build (the tests') natively, through the same steps: `--check`
# of the demo session, then four clips drawn from its shuffle bag with `--seed 1` (`jukebox
# pick` while paused; the windows taken out, so the hour does not matter), each after the cue,
# with the session's volume and gains, played into ALSA's `file` plugin. The two outputs must be
# the same byte for byte: a slip in char signedness, float rounding or byte order on either
# side shows here, and so does one between optimised and unoptimised code, or between the two
# Swift compilers.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/cross-common.sh
trap - EXIT
arm="$work/aarch64"
x86=.build/debug
[ -x "$arm/jukeboxd" ] || { echo "aarch64-smoke: no $arm/jukeboxd; run scripts/cross-build.sh first" >&2; exit 66; }
swift build --product jukeboxd >&2
swift build --product jukebox >&2
qemu="qemu-aarch64-static -L $root$sysroot"

work_dir=$(mktemp -d)
daemon=
finish() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null || true
    rm -rf "$work_dir"
}
trap finish EXIT

# run NAME PREFIX BIN: plays the four picks with one build; the raw output is NAME.raw.
run() {
    local name=$1 prefix=$2 bin=$3 folder="$work_dir/$1"
    mkdir -p "$folder"
    cp clips/*.wav "$folder/"
    $prefix "$bin/jukeboxd" --check clips/session.json --device null >/dev/null
    # The demo session without its time windows, so the picks do not depend on the hour.
    python3 -c 'import json, sys; s = json.load(open("clips/session.json")); [c.pop("windows", None) for c in s["clips"]]; json.dump(s, open(sys.argv[1], "w"))' "$folder/session.json"
    $prefix "$bin/jukeboxd" "$folder/session.json" --seed 1 --socket "$folder/c.sock" --state "$folder/state.json" \
        --device "file:FILE=$work_dir/$name.raw,FORMAT=raw" 2>"$folder/log" &
    daemon=$!
    wait_for "$folder/log" "control socket listening"
    $prefix "$bin/jukebox" --socket "$folder/c.sock" pause >/dev/null
    for _ in 1 2 3 4; do $prefix "$bin/jukebox" --socket "$folder/c.sock" pick >/dev/null; done
    $prefix "$bin/jukebox" --socket "$folder/c.sock" resume >/dev/null
    for _ in $(seq 1 600); do [ "$(grep -c " played " "$folder/log")" -ge 4 ] && break; sleep 0.1; done
    kill -TERM "$daemon"
    wait "$daemon"
    daemon=
    grep ' played ' "$folder/log" | sed 's/^[^ ]* [^ ]* //' > "$work_dir/$name.played"
}

wait_for() {
    for _ in $(seq 1 300); do grep -q "$2" "$1" && return 0; sleep 0.1; done
    echo "aarch64-smoke: never logged \"$2\":" >&2
    cat "$1" >&2
    exit 1
}

run x86_64 "" "$x86"
run aarch64 "$qemu" "$arm"
if ! cmp -s "$work_dir/x86_64.raw" "$work_dir/aarch64.raw" || ! cmp -s "$work_dir/x86_64.played" "$work_dir/aarch64.played"; then
    echo "aarch64-smoke: the two builds played differently" >&2
    ls -l "$work_dir"/*.raw >&2
    diff "$work_dir/x86_64.played" "$work_dir/aarch64.played" >&2 || true
    exit 1
fi
echo "aarch64-smoke: --check passed, and the same $(wc -c < "$work_dir/x86_64.raw") bytes came out of both builds: $(paste -sd ',' "$work_dir/x86_64.played")"
