#!/usr/bin/env bash
# The package test: builds the Debian package (scripts/package), unpacks it into an empty folder
# and runs it from there as a machine without Swift would: with an empty environment and
# PATH=/usr/bin:/bin, so no toolchain and no library path of the build.
#
#   Tests/package-ci.sh [BINARY]     # BINARY: a release build with --static-swift-stdlib
#                                    # (scripts/test passes its own); without it, scripts/package builds
#
# Prints one line per check, "ok ..." or "FAIL ...", and "deb: PATH, SIZE"; exits 1 when a check
# fails. Checks: the control file (architecture, Depends on bluez and libdbus-1-3), the files in their places,
# no Swift library needed (ldd), `--version` with the version and the commit, `demo`, and
# `flash --simulate` of the sample programs: a partial flash, then the same file (up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
samples="$(pwd)/Samples/firmware"

# gzip (--fast): what is tested is the package's contents, not how tightly they are packed.
if [ $# -gt 0 ]; then
    deb="$(scripts/package --fast --binary "$1" | tail -n 1)"
else
    deb="$(scripts/package --fast | tail -n 1)"
fi
echo "deb: $deb, $(du -h "$deb" | cut -f1)"
failures=0
ok() { echo "ok $*"; }
fail() { echo "FAIL $*"; failures=$(( failures + 1 )); }

unpacked="$(mktemp -d -t bitflash-package.XXXXXX)"
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked/root"
mkdir -p "$unpacked/home"
bin="$unpacked/root/usr/bin/bitflash"
# The environment of a teacher's shell, without the build's: PATH without the toolchain, and
# bitflash's state in the scratch folder (Foundation takes the home from the password file,
# not from HOME, hence XDG_STATE_HOME).
clean=(env -i PATH=/usr/bin:/bin HOME="$unpacked/home" XDG_STATE_HOME="$unpacked/home/.local/state" LANG=C.UTF-8)
if "${clean[@]}" sh -c 'command -v swift swiftc' > /dev/null; then
    fail "a Swift toolchain is on /usr/bin:/bin, so this test cannot show that none is needed"
fi

control="$(dpkg-deb -f "$deb" Package Version Architecture Depends)"
arch="$(dpkg --print-architecture)"
grep -qx "Architecture: $arch" <<< "$control" && ok "control: Architecture $arch" || fail "control: Architecture is not $arch: $control"
depends="$(sed -n 's/^Depends: //p' <<< "$control")"
if grep -q '\bbluez\b' <<< "$depends" && grep -q '\blibc6\b' <<< "$depends" \
    && grep -q '\blibdbus-1-3\b' <<< "$depends" && ! grep -qi swift <<< "$depends"; then
    ok "control: Depends $depends"
else
    fail "control: Depends should name bluez, libdbus-1-3 and libc6 and no Swift package: $depends"
fi

for file in usr/bin/bitflash usr/share/man/man1/bitflash.1.gz usr/share/bash-completion/completions/bitflash \
    usr/share/zsh/vendor-completions/_bitflash usr/share/fish/vendor_completions.d/bitflash.fish usr/share/doc/bitflash/copyright; do
    [ -s "$unpacked/root/$file" ] || fail "missing or empty: /$file"
done
# The manual covers the subcommands; the completions complete them.
# (Read whole first: `zcat | grep -q` fails under pipefail when grep stops reading early.)
manual="$(zcat "$unpacked/root/usr/share/man/man1/bitflash.1.gz" 2>/dev/null || true)"
if printf '%s\n' "$manual" | grep '^\.Sh' > /dev/null && printf '%s\n' "$manual" | grep 'simulate' > /dev/null; then
    ok "manual: bitflash.1 in mdoc, with the flash options"
else
    fail "manual: bitflash.1.gz is not an mdoc page covering flash --simulate"
fi
if bash -n "$unpacked/root/usr/share/bash-completion/completions/bitflash" \
    && grep -q 'flash' "$unpacked/root/usr/share/bash-completion/completions/bitflash" \
    && grep -q 'flash' "$unpacked/root/usr/share/zsh/vendor-completions/_bitflash" \
    && grep -q 'flash' "$unpacked/root/usr/share/fish/vendor_completions.d/bitflash.fish"; then
    ok "completions: bash (parses), zsh and fish name the subcommands"
else
    fail "completions: a script does not parse or does not name the subcommands"
fi

libraries="$("${clean[@]}" ldd "$bin" 2>&1)" || true
if grep -qi 'swift\|not found\|not a dynamic' <<< "$libraries"; then
    fail "ldd: the binary needs a Swift library or a missing one: $(grep -i 'swift\|not found\|not a dynamic' <<< "$libraries" | tr -s ' \t\n' ' ')"
else
    ok "ldd: no Swift library; needs $(awk '{print $1}' <<< "$libraries" | grep -v '^/' | tr '\n' ' ')"
fi

version="$("${clean[@]}" "$bin" --version 2>&1)" || true
if grep -qE '^bitflash [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}|unknown)' <<< "$version"; then
    ok "--version: $version"
else
    fail "--version: $version"
fi

# The demo as the README runs it, without --fast: into a pipe it does not pace itself.
if out="$(cd "$unpacked" && "${clean[@]}" "$bin" demo 2>&1)" && grep -q 'partial' <<< "$out"; then
    ok "demo: exit 0, $(grep -c '^== ' <<< "$out") steps"
else
    fail "demo: $(tail -n 5 <<< "$out")"
fi

# A fresh simulated board holds sample-r1-heart (Samples/firmware/README.md): the counter program
# goes partial, then the same file is up to date; both verified.
state="$unpacked/sim"
check_flash() {
    local name="$1" file="$2" want="$3" result
    result="$(cd "$unpacked" && "${clean[@]}" "$bin" flash "$samples/$file" --simulate --sim-state "$state" --json 2>&1 | tail -n 1)" || true
    if python3 - "$want" "$result" << 'EOF'
import json, sys
want, line = sys.argv[1], sys.argv[2]
r = json.loads(line)
sys.exit(0 if r.get("type") == "result" and r.get("path") == want and r.get("verified") is True else 1)
EOF
    then ok "flash --simulate $file: $want, verified"; else fail "flash --simulate $file: wanted $want and verified: $result"; fi
}
check_flash partial sample-r1-counter.hex partial
check_flash same sample-r1-counter.hex up-to-date

[ "$failures" = 0 ] || { echo "package test: $failures check(s) failed"; exit 1; }
echo "package test: every check passed"
