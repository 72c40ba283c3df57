#!/usr/bin/env bash
# What a release publishes, in one folder that a static web server serves as is (the release
# workflow's GitHub Pages; a loopback server in scripts/package-test.sh):
#
#   scripts/apt-publish.sh [--key FINGERPRINT | --new-key] [--assets DIR] REPO_DIR URL DEB…
#
#   - the signed apt repository, with DEB… added (scripts/apt-repo.sh: --key and --new-key are
#     its own; the key is looked up in GNUPGHOME);
#   - the keyring package for URL (scripts/keyring-package.sh), in the repository too, so that a
#     new key reaches users as an upgrade;
#   - REPO_DIR/jukeboxd-archive-keyring.deb, the keyring package at the address the README's
#     install fetches (URL/jukeboxd-archive-keyring.deb);
#   - with --assets DIR: DEB… and the keyring package copied to DIR, with DIR/SHA256SUMS, for a
#     release's downloads; each jukeboxd package named for its suite as well
#     (jukeboxd_0.1.0_amd64_bookworm.deb).
# Prints the keyring package's path in REPO_DIR as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/apt-publish.sh [--key FINGERPRINT | --new-key] [--assets DIR] REPO_DIR URL DEB…" >&2; exit 64; }
key_options=()
assets=
while [ $# -gt 0 ]; do
    case "$1" in
    --new-key) key_options=(--new-key); shift ;;
    --key) key_options=(--key "${2:?$(usage)}"); shift 2 ;;
    --assets) assets=${2:?$(usage)}; shift 2 ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 3 ] || usage
repo=$1
url=${2%/}
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

keyring=$(scripts/apt-repo.sh "${key_options[@]}" "$repo" "$@" | tail -n 1)
keyring_deb=$(scripts/keyring-package.sh "$keyring" "$work" "$url" | tail -n 1)
# Signed with the key that signed the repository a moment ago (apt-repo.sh finds it by the
# folder's keyring).
scripts/apt-repo.sh "$repo" "$keyring_deb" >/dev/null
install -m 0644 "$keyring_deb" "$repo/jukeboxd-archive-keyring.deb"
if [ -n "$assets" ]; then
    # Named for their suite too: the amd64 packages for trixie and for bookworm have the same
    # Debian file name (each is in its suite's pool), not the same contents.
    mkdir -p "$assets"
    for deb in "$@"; do
        suites=$(scripts/apt-repo.sh --suites "$deb")
        name=$(basename "$deb" .deb)
        [ "$(dpkg-deb -f "$deb" Architecture)" = all ] || name="${name}_$suites"
        cp "$deb" "$assets/$name.deb"
    done
    cp "$keyring_deb" "$assets/"
    (cd "$assets" && rm -f SHA256SUMS && sha256sum -- *.deb > SHA256SUMS.new && mv SHA256SUMS.new SHA256SUMS)
fi
echo "apt-publish: $repo serves $# package(s) and the keyring package $(basename "$keyring_deb"); a user starts from $url/jukeboxd-archive-keyring.deb" >&2
echo "$repo/jukeboxd-archive-keyring.deb"
