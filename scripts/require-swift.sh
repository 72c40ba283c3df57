#!/usr/bin/env bash
# Sourced by scripts/demo.sh and scripts/test.sh before anything else: stops with one line
# saying what to do when there is no Swift toolchain, or one older than the packages need
# (6.2: swift-tools-version 6.1 in Package.swift, and 6.2 for the dependencies).
required_swift=6.2
swift_help="install Swift $required_swift or later (the toolchain for Debian 12 from https://www.swift.org/install/linux/, x86_64 or aarch64, or Debian's own swiftlang package, 6.2.3 in unstable), put its usr/bin on PATH, and run this again"
if ! command -v swift > /dev/null 2>&1; then
    echo "$0: there is no swift command on PATH: $swift_help" >&2
    exit 69
fi
swift_version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$swift_version" ] || [ "$(printf '%s\n%s\n' "$required_swift" "$swift_version" | sort -V | head -n 1)" != "$required_swift" ]; then
    echo "$0: $(command -v swift) is Swift ${swift_version:-of an unknown version}, older than jukeboxd needs: $swift_help" >&2
    exit 69
fi
