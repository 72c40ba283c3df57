# Shared by scripts/cross-sdk.sh and scripts/cross-build.sh (sourced, from the repository's
# root, as root): where the sid root, the arm64 sysroot and the SDK bundle live, and how to run
# a command inside the root with the repository and the Swift package mirrors in it.

work="$PWD/.build-cross"
root="$work/sid"
# Inside the root.
sysroot=/opt/jukeboxd-sysroot-arm64
bundle=/opt/jukeboxd-aarch64.artifactbundle
sdk_name=jukeboxd-aarch64
# What the sysroot holds besides what these depend on: the C libraries jukeboxd links, and
# the C and C++ runtimes the Swift runtime needs.
sysroot_packages="libc6-dev libasound2-dev libsndfile1-dev libsoxr-dev libstdc++-14-dev libgcc-14-dev"

# The first Debian archive in this machine's apt sources (deb822 or one-line format).
debian_mirror() {
    {
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p'
    } | grep -E '/debian/?$' | head -1 || true
}

mounted=()
unmount_all() {
    local index
    for ((index = ${#mounted[@]} - 1; index >= 0; index--)); do umount -l "${mounted[index]}" 2>/dev/null || true; done
    mounted=()
}
# Never leave the repository mounted inside the root: removing the root would remove it too.
trap unmount_all EXIT

mount_once() {  # SOURCE TARGET [mount options…]
    local source=$1 target=$2
    shift 2
    mkdir -p "$target"
    mountpoint -q "$target" && return 0
    mount "$@" "$source" "$target"
    mounted+=("$target")
}

# Runs a shell command inside the sid root, with /proc (the Swift driver finds its libraries
# through /proc/self/exe), the repository at /src and the Swift package mirrors (read by git
# through url.insteadOf, as on this machine) mounted.
in_root() {
    mount_once proc "$root/proc" -t proc
    mount_once "$PWD" "$root/src" --bind
    if [ -d /opt/swift-packages ]; then
        mount_once /opt/swift-packages "$root/opt/swift-packages" --bind -o ro
        printf '[url "/opt/swift-packages/"]\n\tinsteadOf = https://github.com/\n[safe]\n\tdirectory = *\n' > "$root/etc/gitconfig"
    fi
    chroot "$root" /bin/bash -c "$1"
}
