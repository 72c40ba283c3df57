#!/usr/bin/env bash
# Generates Sources/ESPHomeAPI/Messages from the api.proto of a pinned aioesphomeapi (what
# Home Assistant's ESPHome integration speaks). The output is committed, so no build runs
# protoc. Needs protoc (Debian's protobuf-compiler) and swift-protobuf's protoc-gen-swift at
# the version Package.swift names, in PROTOC_GEN_SWIFT:
#   git clone https://github.com/apple/swift-protobuf && cd swift-protobuf && git checkout 1.39.0
#   swift build --product protoc-gen-swift
#   PROTOC_GEN_SWIFT=$PWD/.build/debug/protoc-gen-swift scripts/esphome/generate.sh
set -euo pipefail
AIOESPHOMEAPI_VERSION=46.23.0
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${PROTOC_GEN_SWIFT:?set PROTOC_GEN_SWIFT to the path of protoc-gen-swift}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "aioesphomeapi==$AIOESPHOMEAPI_VERSION"
out="$top/Sources/ESPHomeAPI/Messages"
mkdir -p "$out"
"$work/venv/bin/python" "$top/scripts/esphome/extract-api.py" "$work/api.pb" "$out/ESPHomeMessageType.swift"
protoc --descriptor_set_in="$work/api.pb" --plugin=protoc-gen-swift="$PROTOC_GEN_SWIFT" \
    --swift_opt=Visibility=Public --swift_out="$out" api.proto
echo "wrote $out/api.pb.swift and $out/ESPHomeMessageType.swift (aioesphomeapi $AIOESPHOMEAPI_VERSION)"
