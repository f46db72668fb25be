#!/usr/bin/env bash
# The real-stack test: bitflash flashes a simulated board across the real bluetoothd and two
# virtual LE controllers (btvirt) in a qemu VM under software emulation.
#
#   Tests/realstack-ci.sh [OUT_DIR]
#   BITFLASH=path/to/bitflash Tests/realstack-ci.sh [OUT_DIR]   # test that binary, build nothing
#
# Builds the release bitflash (unless BITFLASH names one), boots the VM (Tests/RealStack/run.sh,
# which shares this repository and OUT_DIR into the guest wherever they are) with the guest script
# Tests/RealStack/guest-test.sh, then checks on the host: the JSON results of scan, info and
# the four flashes (partial through BlueZ's sockets, partial back through WriteValue, full update
# with a new runtime, up to date), which D-Bus path each partial flash took, and the board's
# flash afterwards byte for byte against a board given the same file; then those of a stock
# board's Secure DFU, of the recovery of a board left in its bootloader and of a stock micro:bit
# V1's legacy DFU, likewise. Prints the
# bluetoothd version, the ATT MTU and connection interval negotiated (from the HCI trace), the
# modelled time (the same flashes with --simulate) next to the real time of each flash, and per
# flash how long its partial-flashing blocks took in the HCI trace (Tests/RealStack/hci-blocks.py).
#
# Skipped, loudly, when qemu or the BlueZ tools are missing. The kernel package and the
# initramfs are cached in $BITFLASH_VM_CACHE (default ~/.cache/bitflash-realstack).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd -P)"
cd "$repo"
source scripts/lib/quiet.sh

skip() {
    echo "=================================================================="
    echo "REAL-STACK TEST SKIPPED: $1"
    echo "=================================================================="
    exit 0
}
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 not found (install qemu-system-x86; ./scripts/setup does)"
for tool in btvirt btmon btmgmt busybox dbus-daemon /usr/libexec/bluetooth/bluetoothd; do
    command -v "$tool" > /dev/null || skip "$tool not found (install bluez, bluez-test-tools, busybox-static; ./scripts/setup does)"
done
command -v apt-get > /dev/null || skip "apt-get not found: the VM's kernel comes from Debian's linux-image package"

out="${1:-$(mktemp -d -t bitflash-realstack.XXXXXX)}"
mkdir -p "$out"
if [ -n "$(ls -A "$out")" ]; then
    # Only a folder a previous run left is emptied.
    [ -f "$out/binary" ] || { echo "realstack-ci: $out is not empty and not a previous run's folder: give an empty one" >&2; exit 64; }
    rm -rf "${out:?}"/*
fi
# The guest's user steps run as nobody: a copy of the binary in OUT_DIR must be reachable.
chmod 755 "$out"

# OUT_DIR/binary names the binary for the guest: its path in the repository, which the guest
# sees at /tmp/repo, or a copy in OUT_DIR (the guest's /tmp/out) when it lives elsewhere.
if [ -n "${BITFLASH:-}" ]; then
    bin="$(realpath "$BITFLASH")"
    built="binary $BITFLASH"
    echo "$bin" > "$out/binary"
else
    echo ".build/release/bitflash" > "$out/binary"
    build_start=$(date +%s)
    # The flags of scripts/test's release build, so that each reuses the other's.
    release=(swift build -c release --static-swift-stdlib)
    { run_logged "$out/release-build.log" "release build" "${release[@]}" --product bitflash \
        && run_logged "$out/release-build-lab.log" "release build of the laboratory" "${release[@]}" --product bitflash-lab; } \
        || { echo "realstack-ci: the release build failed" >&2; exit 1; }
    bin="$(realpath "$("${release[@]}" --show-bin-path)/bitflash")"
    built="release build $(( $(date +%s) - build_start )) s"
    echo "== $built"
fi
# The laboratory, which plays the simulated board (`bitflash-lab sim serve`), lies beside it.
[ -x "$bin-lab" ] || { echo "realstack-ci: $bin-lab (the laboratory) is not built beside $bin" >&2; exit 1; }
case "$bin" in
    "$repo"/*) echo "${bin#"$repo"/}" > "$out/binary" ;;
    *) cp "$bin" "$out/bitflash"; cp "$bin-lab" "$out/bitflash-lab"; echo /tmp/out/bitflash > "$out/binary" ;;
esac

vm_start=$(date +%s)
if ! "$repo/Tests/RealStack/run.sh" "$repo/Tests/RealStack/guest-test.sh" "$out"; then
    echo "== the guest test failed; its files are in $out"
    for f in console.log serve.log bluetoothd.log; do [ -f "$out/$f" ] && { echo "--- $f (last 40 lines)"; tail -n 40 "$out/$f"; }; done
    for f in "$out"/*.err; do [ -s "$f" ] && { echo "--- $(basename "$f")"; tail -n 20 "$f"; }; done
    exit 1
fi
vm_seconds=$(( $(date +%s) - vm_start ))

# Modelled time: the same three flashes on a simulated board with the link model.
model="$out/model"
"$bin" sim reset --profile microbit-v2-mcuboot --from Samples/firmware/sample-r1-heart.hex --sim-state "$model" > /dev/null
for step in flash-partial-dbus:sample-r1-counter flash-partial:sample-r1-heart flash-full:sample-r2-heart flash-same:sample-r2-heart; do
    "$bin" flash "Samples/firmware/${step#*:}.hex" --simulate microbit-v2-mcuboot --sim-state "$model" --json \
        > "$out/${step%%:*}.model.json" || true
done
# And the stock board's: the Secure DFU of the new runtime, and the recovery from DfuTarg.
"$bin" sim reset --profile microbit-v2 --from Samples/firmware/sample-r1-heart.hex --sim-state "$out/model-stock" > /dev/null
"$bin" flash Samples/firmware/sample-r2-heart.hex --simulate microbit-v2 --sim-state "$out/model-stock" --json \
    > "$out/flash-nordic.model.json" || true
"$bin" sim reset --profile microbit-v2 --from Samples/firmware/sample-r1-heart.hex --stuck-in-bootloader \
    --sim-state "$out/model-stuck" > /dev/null
"$bin" flash Samples/firmware/sample-r2-heart.hex --simulate microbit-v2 --sim-state "$out/model-stuck" --json \
    > "$out/flash-recover.model.json" || true
"$bin" sim reset --profile microbit-v2 --from Samples/firmware/sample-r2-heart.hex --sim-state "$out/reference-stock" > /dev/null
# And the stock micro:bit V1's: the new runtime by legacy DFU.
"$bin" sim reset --profile microbit-v1 --from Samples/firmware/sample-r1-heart.hex --sim-state "$out/model-legacy" > /dev/null
"$bin" flash Samples/firmware/sample-r2-heart.hex --simulate microbit-v1 --sim-state "$out/model-legacy" --json \
    > "$out/flash-legacy.model.json" || true
"$bin" sim reset --profile microbit-v1 --from Samples/firmware/sample-r2-heart.hex --sim-state "$out/reference-legacy" > /dev/null
for board in stock stuck legacy reference-stock reference-legacy; do
    "$bin" sim show --json --sim-state "$out/$board" > "$out/$board-show.json" || true
done
# The reference board: given the final file directly.
reference="$out/reference"
"$bin" sim reset --profile microbit-v2-mcuboot --from Samples/firmware/sample-r2-heart.hex --sim-state "$reference" > /dev/null
"$bin" sim show --json --sim-state "$reference" > "$out/reference-show.json"
"$bin" sim show --json --sim-state "$out/board" > "$out/board-show.json"
"$bin" sim show --json --sim-state "$model" > "$out/model-show.json"
# btmon can fail at the end of a trace cut short by the power-off; what it decoded is kept.
(btmon -r "$out/hci.snoop" > "$out/hci.txt" || true) 2> /dev/null

echo "== partial-flashing blocks in the HCI trace"
python3 "$repo/Tests/RealStack/hci-blocks.py" "$out/hci.snoop" "$out/steps.tsv" | tee "$out/hci-blocks.txt" \
    || echo "(the HCI trace could not be read; see $out/hci.snoop)"
python3 "$repo/Tests/RealStack/check-results.py" "$out"
echo "== real-stack test passed: $built, VM $vm_seconds s; files in $out"
