#!/usr/bin/env bash
# Builds and runs a libFuzzer target over the firmware-format parsers.
#
#   Tests/Fuzz/run.sh TARGET [libFuzzer options...]     e.g.  Tests/Fuzz/run.sh uf2 -runs=20000
#   Tests/Fuzz/run.sh all [libFuzzer options...]        every target in turn
#
# TARGET is uf2, mcuboot, dfu-zip, cbor, smp, partial-flow or mcumgr-flow. The targets are built in release mode with
# `--sanitize=fuzzer` into .build-fuzz/ (separate from the normal build). Swift traps
# (bounds checks, overflow, force unwraps) are what a crash looks like here. AddressSanitizer
# is off by default: with Swift 6.3 on Linux, `--sanitize=address` next to the fuzzer
# leaves libFuzzer without coverage feedback from code that throws, which blinds it.
# FUZZ_ASAN=1 turns it on anyway (separate build folder). Each run starts from the committed seeds (Seeds/TARGET) and the crash
# reproducers (Regressions/TARGET); new interesting inputs go to fuzz-out/TARGET/corpus
# and crashes to fuzz-out/TARGET/, at the repository root. The exit status is
# libFuzzer's: non-zero when an input crashed a parser.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="$root/.build-fuzz"
sanitizers=(--sanitize=fuzzer)
if [ "${FUZZ_ASAN:-0}" = 1 ]; then
    scratch="$root/.build-fuzz-asan"
    sanitizers+=(--sanitize=address)
fi

usage() { echo "usage: $0 {uf2|mcuboot|dfu-zip|cbor|smp|partial-flow|mcumgr-flow|all} [libFuzzer options...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
target="$1"; shift

product_for() {
    case "$1" in
        uf2) echo FuzzUF2 ;;
        mcuboot) echo FuzzMCUboot ;;
        dfu-zip) echo FuzzDFUPackage ;;
        cbor) echo FuzzCBOR ;;
        smp) echo FuzzSMP ;;
        partial-flow) echo FuzzPartialFlow ;;
        mcumgr-flow) echo FuzzMcuMgrFlow ;;
        *) usage ;;
    esac
}

if [ "$target" = all ]; then
    for t in uf2 mcuboot dfu-zip cbor smp partial-flow mcumgr-flow; do "$0" "$t" "$@"; done
    exit 0
fi
product="$(product_for "$target")"

# Reuse the main build's dependency checkouts, so the fuzz build needs no network.
if [ ! -d "$scratch/checkouts" ] && [ -d "$root/.build/checkouts" ]; then
    mkdir -p "$scratch"
    cp -R "$root/.build/checkouts" "$scratch/"
    [ -d "$root/.build/repositories" ] && cp -R "$root/.build/repositories" "$scratch/"
fi

echo "== building $product (release, ${sanitizers[*]})"
swift build --package-path "$here" --scratch-path "$scratch" -c release \
    "${sanitizers[@]}" -Xswiftc -parse-as-library --product "$product"

out="$root/fuzz-out/$target"
mkdir -p "$out/corpus"
inputs=("$out/corpus" "$here/Seeds/$target")
[ -d "$here/Regressions/$target" ] && inputs+=("$here/Regressions/$target")

# The Swift runtime's own crash handler gets in the way of AddressSanitizer's report.
export SWIFT_BACKTRACE=enable=no
# DFUPackage reads each zip through a temporary file: keep those in memory when possible
# (on a disk-backed /tmp the dfu-zip target is about 50 times slower).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
echo "== running $product on ${inputs[*]} $*"
start=$(date +%s)
status=0
"$scratch/release/$product" -artifact_prefix="$out/" -max_len=65536 -print_final_stats=1 "$@" "${inputs[@]}" || status=$?
echo "== $product finished in $(( $(date +%s) - start )) s with status $status"
exit $status
