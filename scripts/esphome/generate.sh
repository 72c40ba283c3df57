#!/usr/bin/env bash
# Generates Sources/ESPHomeAPI/Messages from the api.proto of the aioesphomeapi that
# client-venv.sh pins (what Home Assistant's ESPHome integration speaks). The output is
# committed, so no build runs protoc. Needs protoc (Debian's protobuf-compiler) and swift-protobuf's protoc-gen-swift at
# the version Package.swift names, in PROTOC_GEN_SWIFT:
#   git clone https://github.com/apple/swift-protobuf && cd swift-protobuf && git checkout 1.39.0
#   swift build --product protoc-gen-swift
#   PROTOC_GEN_SWIFT=$PWD/.build/debug/protoc-gen-swift scripts/esphome/generate.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${PROTOC_GEN_SWIFT:?set PROTOC_GEN_SWIFT to the path of protoc-gen-swift}"
# The pinned aioesphomeapi (client-venv.sh holds the version).
python=$("$top/scripts/esphome/client-venv.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$top/Sources/ESPHomeAPI/Messages"
mkdir -p "$out"
"$python" "$top/scripts/esphome/extract-api.py" "$work/api.pb" "$out/ESPHomeMessageType.swift"
protoc --descriptor_set_in="$work/api.pb" --plugin=protoc-gen-swift="$PROTOC_GEN_SWIFT" \
    --swift_opt=Visibility=Public --swift_out="$out" api.proto
echo "wrote $out/api.pb.swift and $out/ESPHomeMessageType.swift"
