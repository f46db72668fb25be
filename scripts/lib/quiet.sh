# Helpers for scripts that keep a long command's output in a log and print a short account.
# Sourced by scripts/test and Tests/Fuzz/run.sh (bash).

# run_logged LOG LABEL COMMAND...
# Runs COMMAND with its standard output and error in LOG. Every minute while it runs
# (BITFLASH_PROGRESS_SECONDS), prints one line with how far it got, read from LOG: SwiftPM's
# last "[done/total]" build step, the tests finished so far, or the campaign's last progress
# line. When it fails, prints the last 40 lines of LOG. Returns COMMAND's exit status.
run_logged() {
    local log="$1" label="$2" status=0 ticker
    shift 2
    mkdir -p "$(dirname "$log")"
    : > "$log"
    (
        started=$(date +%s)
        # Stops with the script, even when an interrupt leaves this background loop running.
        # sleep gets no standard output: killing this loop must not leave a sleep holding the
        # caller's pipe open (`x="$(script)"` would wait out the minute).
        while sleep "${BITFLASH_PROGRESS_SECONDS:-60}" > /dev/null 2>&1 && kill -0 $$ 2> /dev/null; do
            echo "   $label: $(minutes_seconds "$(seconds_since "$started")") so far$(progress_in "$log")"
        done
    ) &
    ticker=$!
    "$@" < /dev/null > "$log" 2>&1 || status=$?
    kill "$ticker" 2> /dev/null || true
    wait "$ticker" 2> /dev/null || true
    if [ "$status" != 0 ]; then
        echo "--- $label failed (exit $status); the last 40 lines of $log:"
        tail -n 40 "$log"
    fi
    return "$status"
}

# progress_in LOG: ", " and how far the command writing LOG got, or nothing.
progress_in() {
    local step finished campaign
    campaign="$(grep '^campaign: [0-9]* of ' "$1" 2> /dev/null | tail -n 1)"
    if [ -n "$campaign" ]; then echo ", ${campaign#campaign: }"; return; fi
    if grep -q ' Test run started' "$1" 2> /dev/null; then
        # Swift Testing starts every test at once; on two cores most report only at the end.
        finished="$(grep -cE '^[^ ]+ Test .* (passed|failed) after ' "$1")" || true
        echo ", ${finished:-0} tests finished"
        return
    fi
    step="$(grep -o '^\[[0-9]*/[0-9]*\]' "$1" 2> /dev/null | tail -n 1)" || true
    if [ -n "$step" ]; then echo ", build step $step"; fi
}

# seconds_since START: whole seconds from START (a `date +%s` value) until now.
seconds_since() { echo $(( $(date +%s) - $1 )); }

# minutes_seconds SECONDS: "7 min 05 s" or "42 s".
minutes_seconds() {
    if [ "$1" -ge 60 ]; then printf '%d min %02d s' $(( $1 / 60 )) $(( $1 % 60 )); else printf '%d s' "$1"; fi
}
