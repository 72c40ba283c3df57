#!/usr/bin/env bash
# The version this source is, and whether a release's tag is it:
#
#   scripts/release-check.sh            # prints the version
#   scripts/release-check.sh TAG        # e.g. v0.1.0: checks the tag, before anything is built
#
# The version is Sources/JukeboxProtocol/Version.swift's (JukeboxVersion.source), which must
# also be packaging/deb/changelog's first entry (scripts/package.sh numbers packages with it).
# A TAG must be "v" and that version, and the entry must be released (not UNRELEASED). Exits 65
# with what to change otherwise. The release workflow runs it first; a test runs it on this
# source with the right tag and wrong ones.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-}
version=$(sed -n 's/.*static let source = "\(.*\)".*/\1/p' Sources/JukeboxProtocol/Version.swift)
[ -n "$version" ] || { echo "release-check: Sources/JukeboxProtocol/Version.swift gives no version (static let source)" >&2; exit 70; }
changelog=$(sed -n '1s/^jukeboxd (\([^)]*\)) \([^;]*\);.*/\1 \2/p' packaging/deb/changelog)
changelog_version=${changelog%% *}
distribution=${changelog#* }
if [ -n "$tag" ] && [ "$tag" != "v$version" ]; then
    echo "release-check: the tag $tag is not v$version, the version in Sources/JukeboxProtocol/Version.swift: tag the release v$version, or change the version there and in packaging/deb/changelog" >&2
    exit 65
fi
if [ "$changelog_version" != "$version" ]; then
    echo "release-check: packaging/deb/changelog's first entry is ${changelog_version:-missing}, not $version: add an entry for $version (dch -v $version)" >&2
    exit 65
fi
if [ -z "$tag" ]; then
    echo "$version"
    exit 0
fi
if [ "$distribution" = UNRELEASED ]; then
    echo "release-check: packaging/deb/changelog's entry for $version is UNRELEASED: release it (dch -r)" >&2
    exit 65
fi
echo "release-check: $tag is jukeboxd $version, as the source and the changelog say"
