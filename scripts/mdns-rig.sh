#!/bin/sh
# A local network for mDNS tests, with nothing of this machine's: two network namespaces joined
# by a veth pair (the device's side, 10.77.0.1, and Home Assistant's, 10.77.0.2), a D-Bus system
# bus of the rig's own, and avahi-daemon on the device's side, as a Raspberry Pi runs it.
#
#   scripts/mdns-rig.sh start DIR          the namespaces and the bus; prints what to set
#   scripts/mdns-rig.sh avahi-start DIR    avahi-daemon (in the device's namespace)
#   scripts/mdns-rig.sh avahi-stop DIR
#   scripts/mdns-rig.sh stop DIR           end every process the rig started (by pid), and
#                                          remove the namespaces
#
# Programs on the device's side run under `nsenter --net=/run/netns/$(cat DIR/device.netns)`,
# Home Assistant's under `nsenter --net=/run/netns/$(cat DIR/home.netns)`, with
# DBUS_SYSTEM_BUS_ADDRESS=unix:path=DIR/bus. Needs root, iproute2, dbus-daemon and
# avahi-daemon (packages iproute2 dbus-daemon avahi-daemon avahi-utils).
set -eu

command=${1:?usage: mdns-rig.sh start|avahi-start|avahi-stop|stop DIR}
dir=${2:?usage: mdns-rig.sh $command DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/bus"

. "$(dirname "$0")/rig-processes.sh"

# Names of the rig's own, from DIR, so two rigs never meet.
tag=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
device="jbmdns-$tag-d"
home="jbmdns-$tag-h"

case $command in
start)
    ip netns add "$device"
    ip netns add "$home"
    echo "$device" >"$dir/device.netns"
    echo "$home" >"$dir/home.netns"
    ip link add jbmdns0 netns "$device" type veth peer name jbmdns1 netns "$home"
    ip -n "$device" link set lo up
    ip -n "$device" link set jbmdns0 multicast on up
    ip -n "$device" addr add 10.77.0.1/24 dev jbmdns0
    ip -n "$home" link set lo up
    ip -n "$home" link set jbmdns1 multicast on up
    ip -n "$home" addr add 10.77.0.2/24 dev jbmdns1
    cat >"$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
    dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >"$dir/dbus.log" 2>&1 &
    echo $! >"$dir/dbus.pid"
    n=0
    until [ -S "$dir/bus" ]; do
        n=$((n + 1))
        if [ $n -gt 100 ]; then echo "mdns-rig: dbus-daemon did not start; see $dir/dbus.log" >&2; exit 69; fi
        sleep 0.05
    done
    # avahi-daemon announces on the veth only, and answers at once rather than after the
    # random delays mDNS allows a busy network.
    cat >"$dir/avahi.conf" <<EOF
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=jbmdns0
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[publish]
publish-workstation=no
publish-hinfo=no
EOF
    echo "DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS"
    ;;
avahi-start)
    # Its own /run (a mount namespace), so its pid file and socket are the rig's, whatever
    # avahi-daemon this machine runs itself.
    nsenter --net="/run/netns/$device" unshare --mount --propagation private /bin/sh -c \
        'mount -t tmpfs tmpfs /run && mkdir /run/avahi-daemon && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits --no-proc-title -f "$0"' \
        "$dir/avahi.conf" >>"$dir/avahi.log" 2>&1 &
    echo $! >"$dir/avahi.pid"
    n=0
    until grep -q "Server startup complete" "$dir/avahi.log" 2>/dev/null && avahi-browse -apt >/dev/null 2>&1; do
        n=$((n + 1))
        if [ $n -gt 200 ] || ! running "$(cat "$dir/avahi.pid")"; then echo "mdns-rig: avahi-daemon did not start; see $dir/avahi.log" >&2; exit 69; fi
        sleep 0.05
    done
    ;;
avahi-stop)
    stop_pid avahi
    # Started again, it must not find the last start's line.
    [ -f "$dir/avahi.log" ] && mv "$dir/avahi.log" "$dir/avahi.log.old"
    ;;
stop)
    stop_pid avahi
    stop_pid dbus
    ip netns del "$device" 2>/dev/null || true
    ip netns del "$home" 2>/dev/null || true
    ;;
*)
    echo "mdns-rig: unknown command $command" >&2
    exit 64
    ;;
esac
