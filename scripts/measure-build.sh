#!/usr/bin/env bash
# The build figures in docs/raspberry-pi.md: a clean release build made as that guide makes it,
# its wall time, the peak memory of its largest process, and the sizes of the two programs
# before and after stripping.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh time binutils
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GB"
/usr/bin/time -o "$scratch/time" -f '%e %M' swift build -c release --static-swift-stdlib --scratch-path "$scratch/build" >/dev/null
read -r seconds kilobytes < "$scratch/time"
echo "clean release build: ${seconds} s; largest process peaked at $((kilobytes / 1024)) MB resident"
for program in jukeboxd jukebox; do
    cp "$scratch/build/release/$program" "$scratch/$program"
    strip "$scratch/$program"
    echo "$program: $(stat -c %s "$scratch/build/release/$program") bytes, $(stat -c %s "$scratch/$program") stripped"
done
