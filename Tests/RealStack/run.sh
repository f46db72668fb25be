#!/usr/bin/env bash
# Boots the real-stack test VM and runs a guest test script in it.
#
#   Tests/RealStack/run.sh GUEST_SCRIPT OUT_DIR [CACHE_DIR]
#
# GUEST_SCRIPT runs inside the guest with the host's root file system as its root (read-only)
# and OUT_DIR mounted writable at /tmp/out. The VM is qemu under software emulation (TCG):
# KVM is not required. Prints the console; exits with the guest script's status.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
script="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
cache="${3:-${BITFLASH_VM_CACHE:-$HOME/.cache/bitflash-realstack}}"
"$here/build-vm.sh" "$cache"
rm -f "$out/status"
start=$(date +%s)
timeout "${BITFLASH_VM_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 1024 -smp 2 \
    -nographic -no-reboot -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$out,mount_tag=out,security_model=none" \
    -append "console=ttyS0 quiet panic=-1 bitflash.test=$script" || echo "qemu exited with status $?"
echo "== VM ran $(( $(date +%s) - start )) s of real time"
status="$(cat "$out/status" 2>/dev/null || echo missing)"
echo "== guest test status: $status"
[ "$status" = 0 ]
