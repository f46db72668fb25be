#!/bin/sh
# The short CI form of the fault campaign: 2,100 seeded runs across the partial, full, auto
# and nordic paths (525 each), every run checked against the flashing invariants, a short
# Nordic DFU campaign on stock boards of each family, and short campaigns against hostile
# boards. Exits non-zero on any invariant violation. The long campaign prints its progress
# (runs done, violations so far) to standard error every 30 s.
#
#   Tests/campaign-ci.sh              # builds in release mode, then runs
#   BITFLASH=path/to/bitflash Tests/campaign-ci.sh   # its laboratory, bitflash-lab, beside it
#   CAMPAIGN_RUNS=3000 CAMPAIGN_SEED=7 Tests/campaign-ci.sh
set -eu
cd "$(dirname "$0")/.."
runs="${CAMPAIGN_RUNS:-2100}"
seed="${CAMPAIGN_SEED:-20261122}"
config="${CAMPAIGN_CONFIGURATION:-release}"
if [ -z "${BITFLASH:-}" ]; then
    # A release build takes the flags of scripts/test's, so that each reuses the other's.
    static=""
    [ "$config" = release ] && static=--static-swift-stdlib
    swift build -c "$config" $static --product bitflash-lab >/dev/null
    BITFLASH="$(swift build -c "$config" $static --show-bin-path)/bitflash"
fi
# The campaign is the laboratory's: bitflash-lab, beside bitflash.
lab="$BITFLASH-lab"
[ -x "$lab" ] || lab="$BITFLASH"
echo "== fault campaign: $runs runs, seed $seed, all paths"
"$lab" sim campaign --runs "$runs" --seed "$seed" --path all
echo "== Nordic DFU on stock boards: 60 runs per board"
for profile in microbit-v2 microbit-v1 calliope-mini-3; do
    start=$(date +%s)
    "$lab" sim campaign --runs 60 --seed "$seed" --path nordic --profile "$profile" --progress 0 >/dev/null \
        || { echo "Nordic DFU on $profile: invariant violated"; "$lab" sim campaign --runs 60 --seed "$seed" --path nordic --profile "$profile"; exit 1; }
    echo "nordic $profile: 60 runs, no violation ($(( $(date +%s) - start )) s)"
done
echo "== hostile boards: 60 runs each"
for kind in moving-region truncated-notifications wrong-sequence wrong-slot-hash; do
    start=$(date +%s)
    "$lab" sim campaign --runs 60 --seed "$seed" --path auto --hostile "$kind" --progress 0 >/dev/null \
        || { echo "hostile board $kind: invariant violated"; "$lab" sim campaign --runs 60 --seed "$seed" --path auto --hostile "$kind"; exit 1; }
    echo "hostile $kind: 60 runs, no violation ($(( $(date +%s) - start )) s)"
done
