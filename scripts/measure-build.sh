#!/usr/bin/env bash
# The build figures in the README and docs/raspberry-pi.md: clean builds made as
# scripts/demo.sh (debug, the two programs) and that guide (release, static) make them, their
# wall time, the peak memory of their largest process, the sizes of the two programs before
# and after stripping, and every warning the builds print, once each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh time binutils
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GB"
# build NAME ARGUMENTS…: a clean build in a scratch folder of its own, timed.
build() {
    local name=$1
    shift
    /usr/bin/time -o "$scratch/$name.time" -f '%e %M' swift build "$@" --scratch-path "$scratch/$name" >"$scratch/$name.log" 2>&1
    read -r seconds kilobytes < "$scratch/$name.time"
    echo "clean $name build: ${seconds} s; largest process peaked at $((kilobytes / 1024)) MB resident"
}
build debug --product jukeboxd
swift build --product jukebox --scratch-path "$scratch/debug" >>"$scratch/debug.log" 2>&1
build release -c release --static-swift-stdlib
for program in jukeboxd jukebox; do
    cp "$scratch/release/release/$program" "$scratch/$program"
    strip "$scratch/$program"
    echo "$program: $(stat -c %s "$scratch/release/release/$program") bytes, $(stat -c %s "$scratch/$program") stripped"
done
echo "warnings (each once; where from):"
cat "$scratch/debug.log" "$scratch/release.log" | grep -E 'warning:' | sed -E 's#/[^ :]*/(checkouts|Sources)/#\1/#' | sort | uniq -c | sort -rn
