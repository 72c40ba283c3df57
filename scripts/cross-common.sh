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
sysroot_packages="libc6-dev libasound2-dev libsndfile1-dev libsoxr-dev libebur128-dev libical-dev libavahi-client-dev zlib1g-dev libstdc++-14-dev libgcc-14-dev"

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
# through /proc/self/exe), the repository at its own path (so #filePath in a test names the
# same file inside and outside the root) and the Swift package mirrors (read by git
# through url.insteadOf, as on this machine) mounted.
in_root() {
    mount_once proc "$root/proc" -t proc
    mount_once "$PWD" "$root$PWD" --bind
    if [ -d /opt/swift-packages ]; then
        mount_once /opt/swift-packages "$root/opt/swift-packages" --bind -o ro
        printf '[url "/opt/swift-packages/"]\n\tinsteadOf = https://github.com/\n[safe]\n\tdirectory = *\n' > "$root/etc/gitconfig"
    fi
    chroot "$root" /bin/bash -c "$1"
}

# Lets the kernel run aarch64 programs through qemu-user (binfmt_misc), so that an arm64
# Debian root can be entered with chroot. Uses qemu-user-static's own registration line.
register_aarch64() {
    # An aarch64 machine runs them itself: registering qemu there would emulate every program.
    [ "$(dpkg --print-architecture)" = arm64 ] && return 0
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return 0
    cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register
}

# target_root DISTRO ARCH: prints the folder of a minimal Debian DISTRO root for ARCH, as a
# Raspberry Pi OS Lite or a server has it (systemd, adduser, and the wget and sudo that the
# README's install types), made once with debootstrap
# (under qemu-user for arm64). Callers copy it rather than change it.
target_root() {
    local distro=$1 arch=$2 dir="$work/roots/$1-$2"
    if [ ! -e "$dir/.complete" ]; then
        [ "$arch" = arm64 ] && register_aarch64
        remove_root "$dir"
        mkdir -p "$work/roots"
        debootstrap --arch="$arch" --variant=minbase --include=systemd,adduser,ca-certificates,wget,sudo \
            "$distro" "$dir" "$(debian_mirror)" >&2
        echo 'Acquire::Check-Valid-Until "false";' > "$dir/etc/apt/apt.conf.d/99jukeboxd"
        echo 'APT::Install-Recommends "false";' >> "$dir/etc/apt/apt.conf.d/99jukeboxd"
        touch "$dir/.complete"
    fi
    echo "$dir"
}

# mounts_inside DIR: what is mounted inside DIR, deepest first.
mounts_inside() {
    awk -v dir="$1/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r
}

# unmount_inside DIR: unmounts everything mounted inside DIR.
unmount_inside() {
    local target
    for target in $(mounts_inside "$1"); do umount -l "$target"; done
}

# remove_root DIR: removes a root, after unmounting whatever is mounted inside it (a bind
# mount of the repository is on the same file system, so rm --one-file-system would go in).
remove_root() {
    unmount_inside "$1"
    if [ -n "$(mounts_inside "$1")" ]; then
        echo "cross: $1 still has mounts inside; not removing it" >&2
        return 1
    fi
    rm -rf --one-file-system "$1"
}

# copy_root FROM TO: a fresh copy of a root, to change.
copy_root() {
    unmount_inside "$1"
    remove_root "$2"
    cp -a "$1" "$2"
}

# in_target ROOT COMMAND: runs a shell command inside a Debian root (any architecture this
# machine can run), with /proc mounted and the host's resolv.conf. Mount ROOT/proc first
# (mount_once) when calling it from a subshell, which cannot unmount for the caller.
in_target() {
    mount_once proc "$1/proc" -t proc
    cp /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null || true
    chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/sh -c "$2"
}

# A root booted with its own systemd, as a Pi or a PC boots: systemd is the first process of a
# PID and mount namespace of its own (the mounts it needs made inside, gone with it), in
# this machine's network, so that units start, enable and restart as the packages ask. For this
# machine's architecture (systemd under qemu-user is not tried).
#   boot_root ROOT          # waits until the boot has finished
#   in_booted COMMAND       # a shell command inside, as root
#   halt_root               # powers it off (and kills what is left after 30 s)
booted=
booted_log=
boot_root() {  # ROOT
    local dir=$1 shell state=
    booted_log=$(mktemp)
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    # systemd 257 runs only on the unified cgroup hierarchy (cgroup2).
    shell='set -e
        mount --bind "$1" "$1"
        mount -t proc proc "$1/proc"
        mount -t sysfs sysfs "$1/sys"
        mount -t cgroup2 cgroup2 "$1/sys/fs/cgroup"
        mount -t tmpfs -o mode=0755 tmpfs "$1/run"
        mount --rbind /dev "$1/dev"
        exec chroot "$1" /usr/bin/env -i container=jukeboxd-test /usr/lib/systemd/systemd --log-target=console --log-level=notice'
    unshare --pid --fork --mount --propagation private /bin/sh -c "$shell" boot "$dir" >"$booted_log" 2>&1 </dev/null &
    local unshare_pid=$!
    for _ in $(seq 1 300); do
        booted=$(pgrep -P "$unshare_pid" || true)
        [ -n "$booted" ] && [ "$(cat "/proc/$booted/comm" 2>/dev/null)" = systemd ] && break
        booted=
        kill -0 "$unshare_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$booted" ] || { cat "$booted_log" >&2; echo "cross: systemd did not start in $dir" >&2; return 1; }
    # Booted when systemd says running (or degraded: kernel modules cannot be loaded inside).
    for _ in $(seq 1 600); do
        state=$(in_booted "systemctl is-system-running" 2>/dev/null || true)
        case "$state" in running | degraded) return 0 ;; esac
        sleep 0.1
    done
    cat "$booted_log" >&2
    echo "cross: $dir did not finish booting (systemd says \"$state\")" >&2
    return 1
}
in_booted() {  # COMMAND
    nsenter -t "$booted" -m -p -r -w /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/sh -c "$1"
}
halt_root() {
    [ -n "$booted" ] || return 0
    local pid=$booted
    in_booted "systemctl poweroff" >/dev/null 2>&1 || kill -s SIGRTMIN+4 "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    booted=
    rm -f "$booted_log"
}
