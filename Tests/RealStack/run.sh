#!/usr/bin/env bash
# Boots the real-stack test VM and runs a guest test script in it.
#
#   Tests/RealStack/run.sh GUEST_SCRIPT OUT_DIR [CACHE_DIR]
#
# GUEST_SCRIPT, a file of this repository, runs inside the guest with the host's root file
# system as its root (read-only), this repository at /tmp/repo (read-only) and OUT_DIR at
# /tmp/out (writable), wherever the two are on the host. The VM is qemu under software
# emulation (TCG): KVM is not required. The serial console is kept in OUT_DIR/console.log
# (without the firmware's terminal control sequences); only the guest's own lines ("guest:
# ...") are printed as they come. Exits with the guest script's status (1 when it has none).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd -P)"
[ $# -ge 2 ] || { echo "usage: $0 GUEST_SCRIPT OUT_DIR [CACHE_DIR]" >&2; exit 64; }
script="$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")"
case "$script" in
    "$repo"/*) relative="${script#"$repo"/}" ;;
    *) echo "run.sh: $1 is not a file of the repository $repo" >&2; exit 64 ;;
esac
# The path goes on the kernel command line, where a space would split it.
case "$relative" in
    *[[:space:]]*) echo "run.sh: the guest script's path in the repository has a space: $relative" >&2; exit 64 ;;
esac
out="$(mkdir -p "$2" && cd "$2" && pwd)"
cache="${3:-${BITFLASH_VM_CACHE:-$HOME/.cache/bitflash-realstack}}"
"$here/build-vm.sh" "$cache"
rm -f "$out/status" "$out/console.log"

# One -virtfs option: qemu's option syntax doubles a comma inside a value.
virtfs() { printf 'local,path=%s,mount_tag=%s,security_model=none%s' "${1//,/,,}" "$2" "$3"; }
# Terminal control sequences (the firmware's) and carriage returns out of the console.
clean() { sed -u -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[()][0-9A-Za-z]//g' -e 's/\x1b[0-9A-Za-z=>]//g' -e 's/\r//g'; }

start=$(date +%s)
set +e
# -nodefaults: no VGA, network card or option ROMs, so the firmware prints next to nothing;
# the kernel's console is the one serial port, on standard output. Not quiet: when the VM
# hangs, console.log (its last 40 lines are printed) shows how far the boot got.
timeout "${BITFLASH_VM_TIMEOUT:-900}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 1024 -smp 2 \
    -nodefaults -no-user-config -display none -serial stdio -no-reboot \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
    -virtfs "$(virtfs / hostroot ,readonly=on,multidevs=remap)" \
    -virtfs "$(virtfs "$repo" repo ,readonly=on,multidevs=remap)" \
    -virtfs "$(virtfs "$out" out "")" \
    -append "console=ttyS0 panic=-1 bitflash.test=$relative" < /dev/null 2>&1 \
    | clean | tee "$out/console.log" | grep --line-buffered '^guest: ' | sed -u 's/^/  /'
qemu_status=${PIPESTATUS[0]}
set -e
[ "$qemu_status" = 0 ] || echo "== qemu exited with status $qemu_status$([ "$qemu_status" = 124 ] && echo " (timed out)")"
status="$(cat "$out/status" 2>/dev/null || echo missing)"
echo "== VM ran $(( $(date +%s) - start )) s of real time; guest test status: $status"
[ "$status" = 0 ]
