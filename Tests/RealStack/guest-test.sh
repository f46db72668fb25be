#!/bin/sh
# The real-stack test, inside the VM (run by Tests/realstack-ci.sh through run.sh).
#
# Starts the system bus, two virtual LE controllers (btvirt: hci0, hci1) and the real
# bluetoothd; plays a simulated board on hci1 (`bitflash sim serve --adapter hci1`) and, as
# a user would on hci0: scan, info, a partial flash, a full update with a new runtime, and a
# flash of what the board already holds. Every output goes to /tmp/out (the host's OUT_DIR);
# the host checks it. Writes the status (0 when every step ran) to /tmp/out/status.
# The repository is at /tmp/repo (run.sh shares it there).
set -u
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out=/tmp/out
# The binary to test: named by the host in OUT_DIR/binary (a path in the repository, or an
# absolute one in the guest), else the release build.
bin="$(cat "$out/binary" 2>/dev/null || echo .build/release/bitflash)"
case "$bin" in /*) ;; *) bin="$repo/$bin" ;; esac
samples="$repo/Samples/firmware"
profile=microbit-v2-mcuboot
say() { echo "guest: $(date +%T) $*"; }
finish() {
    [ -n "${serve:-}" ] && kill -TERM "$serve" 2>/dev/null && wait "$serve"
    [ -n "${monitor:-}" ] && kill -INT "$monitor" 2>/dev/null && wait "$monitor"
    sync
    echo "$1" > "$out/status"
    exit "$1"
}

/usr/libexec/bluetooth/bluetoothd --version > "$out/bluetoothd-version"
say "bluetoothd $(cat "$out/bluetoothd-version"), kernel $(uname -r)"
dbus-daemon --config-file="$repo/Tests/RealStack/system-bus.conf" --fork --nopidfile || finish 10
btvirt -L -l2 > "$out/btvirt.log" 2>&1 &
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e /sys/class/bluetooth/hci1 ] && break; sleep 1; done
[ -e /sys/class/bluetooth/hci1 ] || { say "btvirt made no hci1"; finish 11; }
btmon -w "$out/hci.snoop" > /dev/null 2>&1 &
monitor=$!
/usr/libexec/bluetooth/bluetoothd -n -E -f "$repo/Tests/RealStack/main.conf" > "$out/bluetoothd.log" 2>&1 &
for _ in $(seq 1 20); do busctl --system status org.bluez > /dev/null 2>&1 && break; sleep 1; done
btmgmt --index 0 power on > /dev/null
say "controllers up"

"$bin" sim serve --adapter hci1 --profile "$profile" --from "$samples/sample-r1-heart.hex" \
    --sim-state "$out/board" -v > "$out/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 60); do grep -q " ready on hci1" "$out/serve.log" && break; sleep 1; done
grep " ready on hci1" "$out/serve.log" || { say "sim serve did not get ready:"; cat "$out/serve.log"; finish 12; }
address="$(sed -n 's/.* ready on hci1 (\([0-9A-F:]*\)).*/\1/p' "$out/serve.log")"
say "board at $address"

# Each step: NAME, then the command; stdout to NAME.json, stderr to NAME.err, exit status to NAME.rc.
step() {
    name="$1"
    shift
    say "$name: $*"
    start=$(date +%s.%N)
    "$@" > "$out/$name.json" 2> "$out/$name.err"
    rc=$?
    echo "$rc" > "$out/$name.rc"
    echo "$(date +%s.%N) $start" | awk '{ printf "%.2f\n", $1 - $2 }' > "$out/$name.wall"
    say "$name: exit $rc after $(cat "$out/$name.wall") s"
}
bt="--adapter hci0 --connect-timeout 60 --scan-timeout 30"
step scan "$bin" scan --adapter hci0 --timeout 8 --json
step info "$bin" info --device "$address" $bt --json
step flash-partial "$bin" flash "$samples/sample-r1-counter.hex" --device "$address" $bt --json
step flash-full "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
step flash-same "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
finish 0
