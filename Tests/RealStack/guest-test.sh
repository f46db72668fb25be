#!/bin/sh
# The real-stack test, inside the VM (run by Tests/realstack-ci.sh through run.sh).
#
# Starts the system bus with Debian's own policy, two virtual LE controllers (btvirt: hci0,
# hci1) and the real bluetoothd; plays a simulated board on hci1 (`bitflash sim serve --adapter
# hci1`, as root) and, as a user would on hci0 (as nobody, without supplementary groups): scan
# (waiting for the board), info, a partial flash (through WriteValue and PropertiesChanged:
# BITFLASH_BLUEZ_ACQUIRE=0), a partial flash back (through BlueZ's AcquireWrite/AcquireNotify
# sockets), a full update with a new runtime, and a flash of what the board
# already holds. The D-Bus calls to bluetoothd's characteristics are logged (dbus-monitor) to
# tell the two paths apart; steps.tsv has each step's start and end. Then a stock micro:bit V2
# (partial flashing and the Nordic Secure DFU bootloader) on hci1 at the same address: a new
# runtime by Secure DFU (the buttonless entry, the reset, the reconnection to the bootloader
# through BlueZ's cached table of the application), and the same board left in its bootloader
# ("DfuTarg") by an interrupted update, recovered with the file's application; then a stock
# micro:bit V1 (the legacy Nordic bootloader), given a new runtime by legacy DFU. Every output
# goes to /tmp/out (the host's OUT_DIR); the host checks it. Writes the status (0 when every
# step ran) to /tmp/out/status.
# The repository is at /tmp/repo (run.sh shares it there).
set -u
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out=/tmp/out
# The binary to test: named by the host in OUT_DIR/binary (a path in the repository, or an
# absolute one in the guest), else the release build.
bin="$(cat "$out/binary" 2>/dev/null || echo .build/release/bitflash)"
case "$bin" in /*) ;; *) bin="$repo/$bin" ;; esac
# The laboratory beside it plays the simulated board (`sim serve`).
lab="$bin-lab"
samples="$repo/Samples/firmware"
profile=microbit-v2-mcuboot
say() { echo "guest: $(date +%T) $*"; }
finish() {
    [ -n "${serve:-}" ] && kill -TERM "$serve" 2>/dev/null && wait "$serve"
    [ -n "${calls:-}" ] && kill -TERM "$calls" 2>/dev/null && wait "$calls"
    [ -n "${monitor:-}" ] && kill -INT "$monitor" 2>/dev/null && wait "$monitor"
    sync
    echo "$1" > "$out/status"
    exit "$1"
}

/usr/libexec/bluetooth/bluetoothd --version > "$out/bluetoothd-version"
say "bluetoothd $(cat "$out/bluetoothd-version"), kernel $(uname -r)"
# The host's system bus configuration: /usr/share/dbus-1/system.conf and the bluez package's
# /etc/dbus-1/system.d/bluetooth.conf, so that the user steps meet the policy a teacher's
# account meets (docs/install.md).
dbus-daemon --system --fork --nopidfile || finish 10
btvirt -L -l2 > "$out/btvirt.log" 2>&1 &
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e /sys/class/bluetooth/hci1 ] && break; sleep 1; done
[ -e /sys/class/bluetooth/hci1 ] || { say "btvirt made no hci1"; finish 11; }
btmon -w "$out/hci.snoop" > /dev/null 2>&1 &
monitor=$!
/usr/libexec/bluetooth/bluetoothd -n -E -f "$repo/Tests/RealStack/main.conf" > "$out/bluetoothd.log" 2>&1 &
for _ in $(seq 1 20); do busctl --system status org.bluez > /dev/null 2>&1 && break; sleep 1; done
btmgmt --index 0 power on > /dev/null
say "controllers up"
dbus-monitor --system "type='method_call',destination='org.bluez',interface='org.bluez.GattCharacteristic1'" \
    > "$out/gatt-calls.log" 2>&1 &
calls=$!

"$lab" sim serve --adapter hci1 --profile "$profile" --from "$samples/sample-r1-heart.hex" \
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
    end=$(date +%s.%N)
    echo "$end $start" | awk '{ printf "%.2f\n", $1 - $2 }' > "$out/$name.wall"
    echo "$name $start $end" >> "$out/steps.tsv"
    say "$name: exit $rc after $(cat "$out/$name.wall") s"
}
# The user steps run as nobody, with no supplementary group (so not in `bluetooth`) and no
# capability, in a home of their own for bitflash's resume records. (nobody's home in the
# password file is /nonexistent, and Foundation takes the home from there, not from HOME: hence
# XDG_STATE_HOME.)
user_home=/tmp/user
mkdir -p "$user_home" && chown 65534:65534 "$user_home"
as_user() {
    env -i PATH=/usr/bin:/bin HOME="$user_home" XDG_STATE_HOME="$user_home/.local/state" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
as_user sh -c 'id; grep "^Cap[EP]" /proc/self/status' > "$out/user-id"
say "user steps as $(head -n 1 "$out/user-id")"
bt="--adapter hci0 --connect-timeout 60 --scan-timeout 30"
# On a busy machine the first advertisement can take a while to reach hci0: wait for this board.
step scan as_user "$bin" scan --adapter hci0 --timeout 120 --wait-for "$address" --json
step info as_user "$bin" info --device "$address" $bt --json
# The WriteValue path first: after a client that used AcquireNotify, bluetoothd 5.66 was seen
# to pass later StartNotify clients notifications twice (a registration kept from the earlier
# client), which no client that counts answers by order can survive (docs/simulation.md, "What
# a client cannot prevent"); the socket path ignores those signals.
step flash-partial-dbus as_user env BITFLASH_BLUEZ_ACQUIRE=0 "$bin" flash "$samples/sample-r1-counter.hex" --device "$address" $bt --json
step flash-partial as_user "$bin" flash "$samples/sample-r1-heart.hex" --device "$address" $bt --json
step flash-full as_user "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
step flash-same as_user "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json

# Stock boards. sim serve saves the board at every boot; the next board is served once the last
# one has booted its application (the bootloader resets after answering the final Execute).
stop_serve() { kill -TERM "$serve" 2>/dev/null && wait "$serve"; serve=""; }
serve_board() { # NAME STATE PROFILE [OPTIONS]: serves the board saved in STATE on hci1
    name="$1"; state="$2"; board_profile="$3"; shift 3
    "$lab" sim serve --adapter hci1 --profile "$board_profile" --sim-state "$state" -v "$@" > "$out/serve-$name.log" 2>&1 &
    serve=$!
    for _ in $(seq 1 60); do grep -q " ready on hci1" "$out/serve-$name.log" && break; sleep 1; done
    grep " ready on hci1" "$out/serve-$name.log" || { say "sim serve ($name) did not get ready:"; cat "$out/serve-$name.log"; finish 13; }
}
runs_application() { # STATE: waits until the saved board runs its application
    for _ in $(seq 1 60); do
        "$bin" sim show --json --sim-state "$1" 2>/dev/null | grep -q '"mode" : "application"' && return 0
        sleep 1
    done
    say "the board in $1 did not come back in application mode"
}
stop_serve
serve_board stock "$out/stock" microbit-v2 --from "$samples/sample-r1-heart.hex"
step flash-nordic as_user "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
runs_application "$out/stock"
stop_serve
"$bin" sim reset --profile microbit-v2 --from "$samples/sample-r1-heart.hex" --stuck-in-bootloader --sim-state "$out/stuck" \
    > /dev/null || finish 14
serve_board stuck "$out/stuck" microbit-v2
step flash-recover as_user "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
runs_application "$out/stuck"
# A stock micro:bit V1 (DAL, nRF51, the legacy Nordic bootloader): a new runtime by legacy DFU.
stop_serve
serve_board legacy "$out/legacy" microbit-v1 --from "$samples/sample-r1-heart.hex"
step flash-legacy as_user "$bin" flash "$samples/sample-r2-heart.hex" --device "$address" $bt --json
runs_application "$out/legacy"
finish 0
