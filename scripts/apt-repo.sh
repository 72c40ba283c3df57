#!/usr/bin/env bash
# Makes, or adds to, a signed apt repository that any static web server can serve.
#
#   scripts/apt-repo.sh [--key FINGERPRINT | --new-key] REPO_DIR DEB…
#
#   scripts/apt-repo.sh --suites DEB     # prints the suites DEB is for
#
# DEB: what scripts/package.sh and scripts/keyring-package.sh make. Each jukeboxd package goes
# to the suite it was built for, found in its Depends (trixie's t64 libraries, libasound2t64;
# bookworm's libasound2); a package for all architectures (the keyring's) goes to every suite.
# Suites: trixie (arm64, amd64) and bookworm (amd64). The pool is a folder per suite, since a
# version is built once for each suite with the same name.
#
# The key: --new-key makes one (ed25519, no passphrase, in GNUPGHOME) and prints its
# fingerprint; --key names one in GNUPGHOME; with neither, the key that signed REPO_DIR before
# (its public keyring) signs it again. The private key never goes into REPO_DIR. The public
# key is written as a binary keyring, REPO_DIR/jukeboxd-archive-keyring.pgp, whose path is the
# last line printed.
#
# Run again with more packages, it adds them and keeps the older versions in the pool and the
# indexes, so that `apt install jukeboxd=VERSION` can go back. A package whose name is already
# in the pool with other contents is refused: raise its version.
#
# The indexes and Release files are apt-ftparchive's (apt-utils); the signatures gpg's.
set -euo pipefail

usage() { echo "usage: scripts/apt-repo.sh [--key FINGERPRINT | --new-key] REPO_DIR DEB… | --suites DEB" >&2; exit 64; }
# The suites a package is for.
suites_of() {  # DEB: the suites it is for
    local deb=$1 arch depends
    arch=$(dpkg-deb -f "$deb" Architecture)
    depends=$(dpkg-deb -f "$deb" Depends)
    if [ "$arch" = all ]; then
        echo trixie bookworm
    elif [[ "$depends" == *libasound2t64* ]]; then
        echo trixie
    elif [[ "$depends" == *libasound2* ]]; then
        [ "$arch" = amd64 ] || { echo "apt-repo: $deb is a bookworm package for $arch; bookworm is served for amd64 only" >&2; exit 65; }
        echo bookworm
    else
        echo "apt-repo: cannot tell which suite $deb is for (its Depends names neither libasound2t64 nor libasound2)" >&2
        exit 65
    fi
}
if [ "${1:-}" = --suites ]; then
    [ -f "${2:-}" ] || usage
    suites_of "$2"
    exit 0
fi
key=
new_key=false
case "${1:-}" in
--new-key) new_key=true; shift ;;
--key) key=${2:?$(usage)}; shift 2 ;;
-*) usage ;;
esac
[ $# -ge 2 ] || usage
repo=$1
shift
for tool in apt-ftparchive gpg dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "apt-repo: $tool is missing (apt-get install apt-utils gnupg dpkg)" >&2; exit 69; }
done
for deb in "$@"; do
    [ -f "$deb" ] || { echo "apt-repo: $deb: no such file" >&2; exit 66; }
done
mkdir -p "$repo"
keyring="$repo/jukeboxd-archive-keyring.pgp"

# Everything under REPO_DIR is published: the secret key must never be there. GNUPGHOME
# inside it is refused before any key is made, and the folder is searched for secret key
# material before anything is written and again at the end.
gnupg_home=$(realpath -m "${GNUPGHOME:-$HOME/.gnupg}")
repo_real=$(realpath "$repo")
case "$gnupg_home/" in
"$repo_real"/*)
    echo "apt-repo: GNUPGHOME ($gnupg_home) is inside $repo, which is published: the secret key would be too; use a GNUPGHOME outside it" >&2
    exit 78 ;;
esac
secret_material() {  # prints the first file under REPO_DIR that holds a secret key
    local file
    while IFS= read -r -d '' file; do
        case "${file##*/}" in
        secring.gpg) echo "$file"; return ;;
        esac
        case "$file" in */private-keys-v1.d/*) echo "$file"; return ;; esac
        if grep -qs -e '-----BEGIN PGP PRIVATE KEY BLOCK-----' -e '-----BEGIN OPENSSH PRIVATE KEY-----' "$file"; then echo "$file"; return; fi
        if [[ "$file" == *.gpg || "$file" == *.pgp || "$file" == *.kbx ]] \
            && gpg --batch --with-colons --show-keys "$file" 2>/dev/null | grep -q '^sec'; then echo "$file"; return; fi
    done < <(find "$repo_real" -type f -print0)
}
refuse_secrets() {
    local found
    found=$(secret_material)
    [ -z "$found" ] || { echo "apt-repo: $found holds a secret key, and everything in $repo is published: move it out of $repo" >&2; exit 78; }
}
refuse_secrets

# The signing key.
if $new_key; then
    gpg --batch --pinentry-mode loopback --passphrase '' --quick-generate-key "jukeboxd archive signing key" ed25519 sign never 2>/dev/null
    key=$(gpg --batch --with-colons --list-secret-keys "jukeboxd archive signing key" | awk -F: '$1 == "fpr" { print $10 }' | tail -n 1)
    made_key=$key
elif [ -z "$key" ]; then
    [ -f "$keyring" ] || { echo "apt-repo: $repo has no key yet: give --new-key, or --key FINGERPRINT" >&2; exit 64; }
    key=$(gpg --batch --with-colons --show-keys "$keyring" | awk -F: '$1 == "fpr" { print $10; exit }')
fi
gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 \
    || { echo "apt-repo: the secret key $key is not in ${GNUPGHOME:-~/.gnupg}" >&2; exit 77; }
gpg --batch --export "$key" > "$keyring.new"
mv "$keyring.new" "$keyring"

# Each package into its suite's pool.
for deb in "$@"; do
    package=$(dpkg-deb -f "$deb" Package)
    for suite in $(suites_of "$deb"); do
        pool="$repo/pool/$suite/main/${package:0:1}/$package"
        mkdir -p "$pool"
        target="$pool/$(basename "$deb")"
        if [ -e "$target" ]; then
            cmp -s "$deb" "$target" || { echo "apt-repo: $target is already in the repository with other contents; raise the version" >&2; exit 65; }
            continue
        fi
        cp "$deb" "$target.new"
        mv "$target.new" "$target"
        echo "apt-repo: $(basename "$deb") in $suite" >&2
    done
done

# The indexes and the signed Release files of each suite that has packages.
architectures() { case $1 in trixie) echo "arm64 amd64" ;; bookworm) echo amd64 ;; esac; }
for suite in trixie bookworm; do
    [ -d "$repo/pool/$suite" ] || continue
    dists="$repo/dists/$suite"
    for arch in $(architectures "$suite"); do
        mkdir -p "$dists/main/binary-$arch"
        (cd "$repo" && apt-ftparchive --arch "$arch" packages "pool/$suite") > "$dists/main/binary-$arch/Packages"
        gzip -9nkf "$dists/main/binary-$arch/Packages"
    done
    (cd "$dists" && apt-ftparchive \
        -o APT::FTPArchive::Release::Origin=jukeboxd -o APT::FTPArchive::Release::Label=jukeboxd \
        -o APT::FTPArchive::Release::Suite="$suite" -o APT::FTPArchive::Release::Codename="$suite" \
        -o APT::FTPArchive::Release::Architectures="$(architectures "$suite")" -o APT::FTPArchive::Release::Components=main \
        -o APT::FTPArchive::Release::Description="jukeboxd for Debian $suite" \
        release .) > "$dists/Release.new"
    mv "$dists/Release.new" "$dists/Release"
    gpg --batch --yes --local-user "$key" --digest-algo SHA512 --clearsign --output "$dists/InRelease" "$dists/Release"
    gpg --batch --yes --local-user "$key" --digest-algo SHA512 --armor --detach-sign --output "$dists/Release.gpg" "$dists/Release"
    echo "apt-repo: $suite signed with $key" >&2
done
refuse_secrets
[ -z "${made_key:-}" ] || echo "apt-repo: made the signing key $made_key (in $gnupg_home; keep it, it is not in $repo)" >&2
realpath "$keyring"
