#!/usr/bin/env bash
# Builds and runs the libFuzzer targets over the firmware-format parsers.
#
#   Tests/Fuzz/run.sh TARGET [--short] [libFuzzer options...]   e.g.  Tests/Fuzz/run.sh hex -runs=1000000
#   Tests/Fuzz/run.sh --all [--short] [libFuzzer options...]    every target in turn ("all" works too)
#
# TARGET is hex (Intel HEX and Universal Hex reader), firmware (Firmware.parse, the front
# door over every format), uf2, mcuboot, dfu-zip, cbor, smp, nordic-frames (the Nordic DFU
# frame decoders, init packets, CRCs and application cut), partial-flow (the partial-flashing
# client fed hostile event sequences), mcumgr-flow (the McuMgr client, likewise),
# secure-dfu-flow or legacy-dfu-flow (the Nordic DFU clients, likewise). --short is the CI
# run: every target for a fixed number of executions from the committed seeds and crash
# reproducers only, with a fixed random seed, so it is repeatable (see below): 50,000 for the parsers
# and decoders (a few seconds each), 100,000 for the Nordic flows (about 10 s each), 20,000
# for partial-flow and mcumgr-flow.
# FUZZ_SHORT_RUNS sets one count for every target. A short run prints one line per target
# (runs, speed, coverage, corpus) and keeps libFuzzer's output in fuzz-out/TARGET/short.log,
# printing its tail when the target fails; FUZZ_VERBOSE=1 prints everything as it comes.
# The first build compiles every dependency again, sanitized (swift-crypto's BoringSSL takes
# minutes); later builds only what changed. FUZZ_SCRATCH names another build folder than
# .build-fuzz/; a lock keeps two runs from building in the same one at once. (A folder shared
# by clones saves little: each clone's own sources are new to it, and they are most of the
# build.)
#
# The targets are built once, in release mode with `--sanitize=fuzzer`, into .build-fuzz/
# (separate from the normal build). Swift traps (bounds checks, overflow, force unwraps) are
# what a crash looks like here. AddressSanitizer is off by default: with Swift 6.3 on Linux,
# `--sanitize=address` next to the fuzzer leaves libFuzzer without coverage feedback from code
# that throws, which blinds it. FUZZ_ASAN=1 turns it on anyway (separate build folder).
# Long runs start from fuzz-out/TARGET/corpus (new interesting inputs go there), the committed
# seeds (Seeds/TARGET) and the crash reproducers (Regressions/TARGET); crashes are written to
# fuzz-out/TARGET/, at the repository root. The exit status is non-zero when an input crashed
# a parser.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=../../scripts/lib/quiet.sh
source "$root/scripts/lib/quiet.sh"
scratch="${FUZZ_SCRATCH:-$root/.build-fuzz}"
sanitizers=(--sanitize=fuzzer)
if [ "${FUZZ_ASAN:-0}" = 1 ]; then
    scratch="${FUZZ_SCRATCH:-$root/.build-fuzz}-asan"
    sanitizers+=(--sanitize=address)
fi
all_targets=(hex firmware uf2 mcuboot dfu-zip cbor smp partial-flow mcumgr-flow nordic-frames secure-dfu-flow legacy-dfu-flow)

usage() { echo "usage: $0 {hex|firmware|uf2|mcuboot|dfu-zip|cbor|smp|partial-flow|mcumgr-flow|nordic-frames|secure-dfu-flow|legacy-dfu-flow|--all} [--short] [libFuzzer options...]" >&2; exit 2; }

product_for() {
    case "$1" in
        hex) echo FuzzIntelHex ;;
        firmware) echo FuzzFirmware ;;
        uf2) echo FuzzUF2 ;;
        mcuboot) echo FuzzMCUboot ;;
        dfu-zip) echo FuzzDFUPackage ;;
        cbor) echo FuzzCBOR ;;
        smp) echo FuzzSMP ;;
        partial-flow) echo FuzzPartialFlow ;;
        mcumgr-flow) echo FuzzMcuMgrFlow ;;
        nordic-frames) echo FuzzNordicFrames ;;
        secure-dfu-flow) echo FuzzSecureDFUFlow ;;
        legacy-dfu-flow) echo FuzzLegacyDFUFlow ;;
        *) usage ;;
    esac
}

short_runs_for() {
    case "$1" in
        partial-flow|mcumgr-flow) echo 20000 ;;
        secure-dfu-flow|legacy-dfu-flow) echo 100000 ;;
        *) echo 50000 ;;
    esac
}

targets=()
short=0
options=()
for arg in "$@"; do
    case "$arg" in
        --all|all) targets=("${all_targets[@]}") ;;
        --short) short=1 ;;
        -*) options+=("$arg") ;;
        *) product_for "$arg" >/dev/null; targets+=("$arg") ;;
    esac
done
[ ${#targets[@]} -ge 1 ] || usage
quiet=$short
[ "${FUZZ_VERBOSE:-0}" = 1 ] && quiet=0

mkdir -p "$scratch"
# One build at a time in a scratch folder (it may be shared by checkouts): the lock is held
# until this script ends, as the targets run from it.
exec 9> "$scratch/.lock"
if ! flock -n 9; then
    echo "== waiting for another fuzz build in $scratch"
    flock 9
fi
# Reuse the main build's dependency checkouts, so the fuzz build needs no network.
if [ ! -d "$scratch/checkouts" ] && [ -d "$root/.build/checkouts" ]; then
    cp -R "$root/.build/checkouts" "$scratch/"
    [ -d "$root/.build/repositories" ] && cp -R "$root/.build/repositories" "$scratch/"
fi

echo "== building the fuzz targets (release, ${sanitizers[*]}) in $scratch"
# SwiftPM keeps the build plan of the parent package's sources and misses files added to it
# since; dropping the plan makes it list them again (what was compiled is kept).
rm -f "$scratch/release.yaml"
build_start=$(date +%s)
build=(swift build --package-path "$here" --scratch-path "$scratch" -c release "${sanitizers[@]}" -Xswiftc -parse-as-library)
if [ "$quiet" = 1 ]; then
    mkdir -p "$root/fuzz-out"
    run_logged "$root/fuzz-out/build.log" "fuzz build" "${build[@]}"
else
    "${build[@]}"
fi
echo "== built in $(( $(date +%s) - build_start )) s"

# summarize TARGET LOG SECONDS STATUS: one line from libFuzzer's output and final statistics.
summarize() {
    awk -v target="$1" -v seconds="$3" -v status="$4" '
        /^INFO: seed corpus: files: / { seeds = $5 }
        /^stat::number_of_executed_units:/ { runs = $2 }
        /(INITED|DONE)[ \t]+cov: / {
            for (i = 1; i <= NF; i++) {
                if ($i == "cov:") cov = $(i + 1)
                if ($i == "ft:") ft = $(i + 1)
                if ($i == "corp:") { corpus = $(i + 1); sub(/\/.*/, "", corpus) }
            }
        }
        END {
            printf "   %-16s %s: %s runs in %s s from %s committed inputs (seeds, regressions); coverage %s edges, %s features; corpus %s inputs\n",
                target, status == 0 ? "ok" : "FAILED (exit " status ")", runs == "" ? "?" : runs, seconds,
                seeds == "" ? "?" : seeds, cov == "" ? "?" : cov, ft == "" ? "?" : ft, corpus == "" ? "?" : corpus
        }' "$2"
}

# The Swift runtime's own crash handler gets in the way of AddressSanitizer's report.
export SWIFT_BACKTRACE=enable=no
# A short (CI) run repeats exactly only when nothing but libFuzzer's seed chooses: Swift seeds
# its hashing afresh in every process and a dictionary's order depends on where it lies in
# memory, so both are fixed (SWIFT_DETERMINISTIC_HASHING, no address randomisation), and
# libFuzzer does not reload its corpus folder on a clock (-reload=0).
prefix=()
if [ "$short" = 1 ]; then
    export SWIFT_DETERMINISTIC_HASHING=1
    setarch "$(uname -m)" -R true 2>/dev/null && prefix=(setarch "$(uname -m)" -R)
fi
failed=()
throwaway="$(mktemp -d)"
trap 'rm -rf "$throwaway"' EXIT
for target in "${targets[@]}"; do
    product="$(product_for "$target")"
    out="$root/fuzz-out/$target"
    mkdir -p "$out/corpus"
    inputs=()
    if [ "$short" = 1 ]; then
        # New inputs go to a throw-away folder: every CI run starts from the same files.
        mkdir -p "$throwaway/$target"
        inputs+=("$throwaway/$target")
        run_options=(-runs="${FUZZ_SHORT_RUNS:-$(short_runs_for "$target")}" -seed=1 -reload=0)
    else
        inputs+=("$out/corpus")
        run_options=()
    fi
    inputs+=("$here/Seeds/$target")
    [ -d "$here/Regressions/$target" ] && inputs+=("$here/Regressions/$target")
    command=("${prefix[@]}" "$scratch/release/$product" -artifact_prefix="$out/" -max_len=65536 -print_final_stats=1
        "${run_options[@]}" "${options[@]}" "${inputs[@]}")
    start=$(date +%s)
    status=0
    if [ "$quiet" = 1 ]; then
        log="$out/short.log"
        "${command[@]}" > "$log" 2>&1 || status=$?
        summarize "$target" "$log" "$(( $(date +%s) - start ))" "$status"
        if [ "$status" != 0 ]; then
            echo "--- $target: the last 40 lines of $log"
            tail -n 40 "$log"
            # One line a CI report can carry: the cause, and the input that caused it in hex
            # (the reproducer file is lost with the CI machine).
            cause="$(grep -m 1 -E 'Fatal error|Precondition failed|ERROR: libFuzzer|==ERROR|deadly signal' "$log" || true)"
            crash="$(ls -t "$out"/crash-* "$out"/timeout-* "$out"/oom-* 2>/dev/null | head -n 1 || true)"
            input="none written"
            [ -z "$crash" ] || input="$(wc -c < "$crash") bytes, $(head -c 512 "$crash" | od -An -v -tx1 | tr -d ' \n')"
            echo "   $target crashed: ${cause:-exit $status}; input: $input"
        fi
    else
        echo "== running $product on ${inputs[*]} ${run_options[*]} ${options[*]:-}"
        "${command[@]}" || status=$?
        echo "== $product finished in $(( $(date +%s) - start )) s with status $status"
    fi
    [ "$status" = 0 ] || failed+=("$target")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "== fuzz targets that crashed: ${failed[*]} (reproducers in fuzz-out/)" >&2
    exit 1
fi
