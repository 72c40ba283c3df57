#!/usr/bin/env bash
# Makes jukeboxd-archive-keyring, the package that lets apt trust the repository
# scripts/apt-repo.sh signs (https://wiki.debian.org/DebianRepository/UseThirdParty):
#
#   scripts/keyring-package.sh KEYRING OUT_DIR [URL]
#
# KEYRING: the repository's public keyring (what apt-repo.sh prints). URL: where the repository
# is served; packaging/apt-url by default, the one line a fork changes to publish its own.
# The package (architecture all) installs the keyring as
# /usr/share/keyrings/jukeboxd-archive-keyring.pgp, and its postinst writes
# /etc/apt/sources.list.d/jukeboxd.sources (deb822, Signed-By that keyring) for the system's
# own release (trixie or bookworm). Its version is the key's creation date, so a new key is an
# ordinary upgrade, and the package is made the same, byte for byte, each time. Prints the
# package's path as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/keyring-package.sh KEYRING OUT_DIR [URL]" >&2; exit 64; }
keyring=$(realpath "${1:-}" 2>/dev/null) || usage
[ -f "$keyring" ] || usage
out=${2:?$(usage)}
url=${3:-$(head -n 1 packaging/apt-url)}
# A plain address only: it becomes data in a script that runs as root (the postinst), so
# nothing in it may be anything a shell reads as more than text.
if ! [[ "$url" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/%+-]*)?$ || "$url" =~ ^https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?(/[A-Za-z0-9._~/%+-]*)?$ ]]; then
    echo "keyring-package: \"$url\" is not a plain http:// or https:// address (a host, an optional port and a path of letters, digits and . _ ~ / % + -)" >&2
    exit 65
fi
created=$(gpg --batch --with-colons --show-keys "$keyring" | awk -F: '$1 == "pub" { print $6; exit }')
[ -n "$created" ] || { echo "keyring-package: $keyring holds no public key" >&2; exit 65; }
version=$(date -u -d "@$created" +%Y.%m.%d)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
package="$stage/jukeboxd-archive-keyring"
install -D -m 0644 "$keyring" "$package/usr/share/keyrings/jukeboxd-archive-keyring.pgp"
doc="$package/usr/share/doc/jukeboxd-archive-keyring"
install -D -m 0644 packaging/deb/copyright "$doc/copyright"
cat > "$stage/changelog" <<CHANGELOG
jukeboxd-archive-keyring ($version) unstable; urgency=medium

  * The key that signs the jukeboxd repository, made on $version.

 -- jukeboxd authors <jukeboxd@example.org>  $(date -u -R -d "@$created")
CHANGELOG
gzip -9n < "$stage/changelog" > "$doc/changelog.gz"
mkdir -p "$package/DEBIAN"
cat > "$package/DEBIAN/postinst" <<POSTINST
#!/bin/sh
# The repository, for this system's release, trusted with the key this package installs.
set -e
if [ "\$1" = configure ]; then
    codename=\$(. "\${DPKG_ROOT:-}/etc/os-release" && echo "\${VERSION_CODENAME:-}")
    case "\$codename" in
    trixie | bookworm) ;;
    *) echo "jukeboxd-archive-keyring: this system's release (\${codename:-unknown}) is not one the repository serves (trixie, bookworm); using trixie's" >&2
       codename=trixie ;;
    esac
    sources="\${DPKG_ROOT:-}/etc/apt/sources.list.d/jukeboxd.sources"
    # The address is data: printed from a single-quoted word, never read by the shell.
    url='$url'
    printf 'Types: deb\\nURIs: %s\\nSuites: %s\\nComponents: main\\nSigned-By: /usr/share/keyrings/jukeboxd-archive-keyring.pgp\\n' "\$url" "\$codename" > "\$sources.dpkg-new"
    mv "\$sources.dpkg-new" "\$sources"
fi
exit 0
POSTINST
cat > "$package/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
# Without the key, the repository it points to cannot be used: the source goes with it.
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    rm -f "${DPKG_ROOT:-}/etc/apt/sources.list.d/jukeboxd.sources"
fi
exit 0
POSTRM
chmod 0755 "$package/DEBIAN/postinst" "$package/DEBIAN/postrm"
cat > "$package/DEBIAN/control" <<CONTROL
Package: jukeboxd-archive-keyring
Version: $version
Architecture: all
Maintainer: jukeboxd authors <jukeboxd@example.org>
Installed-Size: $(du -sk --exclude=DEBIAN "$package" | cut -f1)
Section: misc
Priority: optional
Multi-Arch: foreign
Description: key and source of the jukeboxd apt repository
 This package lets apt install and upgrade jukeboxd, the headless audio clip
 jukebox, from its own repository: it installs the key that signs the
 repository, and a source for this system's Debian release that trusts that
 key alone. The repository is at:
 .
  $url
CONTROL
(cd "$package" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$package/DEBIAN/control" "$package/DEBIAN/md5sums"
mkdir -p "$out"
deb="$out/jukeboxd-archive-keyring_${version}_all.deb"
# The same bytes each time for the same key and address (the files' times are the key's), so
# that each release adds it to the repository again as the package already there.
find "$package" -exec touch -h -d "@$created" {} +
SOURCE_DATE_EPOCH=$created dpkg-deb --root-owner-group -Zxz --build "$package" "$deb" >&2
if command -v lintian >/dev/null; then lintian --fail-on error --info "$deb" >&2; fi
echo "$deb"
