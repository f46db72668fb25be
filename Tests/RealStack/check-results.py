#!/usr/bin/env python3
"""Checks what the real-stack guest test left in OUT_DIR and prints its figures.

    check-results.py OUT_DIR

Fails (exit 1, naming every failed check) unless: the user steps ran as an unprivileged user
outside the bluetooth group, the scan found the board, info read it,
both partial flashes took the partial path (the first with its packets and notifications
through BlueZ's AcquireWrite/AcquireNotify sockets, the second through WriteValue, as the
D-Bus calls logged in gatt-calls.log show), the full update took the full path, the last
flash found the board up to date, each verified; and the board's flash afterwards equals, region by
region and over the whole application region (SHA-256), a board given the final file directly
and a simulated board after the same three flashes (--simulate). Likewise for the stock board:
the new runtime by Nordic Secure DFU and the recovery from its bootloader, and a micro:bit V1's
new runtime by legacy DFU, each verified, the board back in its application with the
application region of a board given the file.
Prints the bluetoothd version, the ATT MTU and connection interval(s) from the HCI trace, and
the modelled time (the same flash under --simulate) next to the real time of each flash.
"""
import json
import re
import sys
from pathlib import Path

out = Path(sys.argv[1])
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def text(name):
    path = out / name
    return path.read_text(errors="replace") if path.exists() else ""


def rc(name):
    value = text(name + ".rc").strip()
    return int(value) if value.lstrip("-").isdigit() else None


def result(name):
    """The `result` object of a flash's JSON lines (None when there is none)."""
    for line in text(name).splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "result":
            return obj
    return None


serve = text("serve.log")
m = re.search(r" ready on hci1 \(([0-9A-F:]+)\)", serve)
address = m.group(1) if m else None
check(address is not None, "sim serve --adapter hci1 got ready and advertised")

user = text("user-id")
check("uid=65534" in user and "bluetooth" not in user and "CapEff:\t0000000000000000" in user,
      "the user steps ran as nobody, outside the bluetooth group, with no capability, under Debian's D-Bus policy")
check(not any("cannot save" in text(name + ".err") for name in ("flash-partial", "flash-partial-dbus", "flash-full", "flash-same", "flash-nordic", "flash-recover", "flash-legacy")),
      "the user's flashes kept their resume records (no warning that they could not be saved)")
try:
    scanned = [b for b in json.loads(text("scan.json") or "[]") if b.get("address") == address]
except ValueError:
    scanned = []
# The served board advertises its name only, no service UUIDs, as CODAL does: found by name.
check(rc("scan") == 0 and address is not None and len(scanned) == 1
      and (scanned[0].get("name") or "").startswith("BBC micro:bit") and scanned[0].get("mode") in ("pairing", "unknown"),
      f"scan on hci0 found the board {address} by its name ({scanned[0] if scanned else 'not listed'})")
check(rc("info") == 0 and address is not None and address in text("info.json"), "info --device read the board")

expected = {"flash-partial": ("partial", {0}), "flash-partial-dbus": ("partial", {0}), "flash-full": ("full", {0, 3}),
            "flash-same": ("up-to-date", {0})}
for name, (path, codes) in expected.items():
    r = result(name + ".json") or {}
    check(rc(name) in codes and r.get("path") == path and r.get("verified") is True and not r.get("error"),
          f"{name}: exit {rc(name)}, path {r.get('path')}, verified {r.get('verified')} (expected {path})")


def gatt_calls():
    """Per step: how often bitflash called each GattCharacteristic1 method of bluetoothd."""
    steps = [line.split() for line in text("steps.tsv").splitlines() if len(line.split()) == 3]
    counts = {name: {} for name, _, _ in steps}
    for m in re.finditer(r"method call time=([\d.]+) .*?member=(\w+)", text("gatt-calls.log")):
        when, member = float(m.group(1)), m.group(2)
        for name, start, end in steps:
            if float(start) <= when <= float(end):
                counts[name][member] = counts[name].get(member, 0) + 1
    return counts


calls = gatt_calls()
socket_step, dbus_step = calls.get("flash-partial", {}), calls.get("flash-partial-dbus", {})
check(socket_step.get("AcquireWrite", 0) >= 1 and socket_step.get("AcquireNotify", 0) >= 1
      and socket_step.get("WriteValue", 0) < 20,
      f"flash-partial went through BlueZ's sockets (calls: {dict(sorted(socket_step.items()))})")
check(dbus_step.get("AcquireWrite", 0) == 0 and dbus_step.get("AcquireNotify", 0) == 0 and dbus_step.get("WriteValue", 0) > 100,
      f"flash-partial-dbus (BITFLASH_BLUEZ_ACQUIRE=0) went through WriteValue (calls: {dict(sorted(dbus_step.items()))})")


def show(name):
    try:
        boards = json.loads(text(name))
        return boards[0] if boards else {}
    except ValueError:
        return {}


board, reference, model = show("board-show.json"), show("reference-show.json"), show("model-show.json")
check(bool(reference.get("applicationSHA256")) and board.get("applicationSHA256") == reference.get("applicationSHA256"),
      "the board's application region equals a board given the file, byte for byte (SHA-256 "
      f"{board.get('applicationSHA256', '?')[:16]}…)")
check(model.get("applicationSHA256") == board.get("applicationSHA256"),
      "the board's application region equals the simulated board's after the same four flashes (--simulate)")
# The memory map after a full update is the bootloader's view of the new image; a board given the
# file directly computes it from the file, so the same flashes under --simulate are the reference.
check(board.get("regions") == model.get("regions") and bool(model.get("regions")),
      "the board's memory map (regions and hashes) equals the simulated board's after the same flashes")
check([r.get("hash") for r in board.get("regions", [])] == [r.get("hash") for r in reference.get("regions", [])],
      "the board's region hashes equal those of a board given the file")
check(board.get("mode") == "application" and board.get("flashIncomplete") is False,
      f"the board runs its application (mode {board.get('mode')}, flash incomplete {board.get('flashIncomplete')})")

# The stock board (partial flashing + Nordic Secure DFU bootloader): a new runtime by Secure DFU,
# then the same board left in its bootloader and recovered, each compared with a board given the file.
# Then a stock micro:bit V1 (legacy DFU bootloader) given the new runtime, against a V1 given the file.
stock_expected = {"flash-nordic": ("runtime-differs", "stock", "reference-stock"),
                  "flash-recover": ("in-bootloader", "stuck", "reference-stock"),
                  "flash-legacy": ("runtime-differs", "legacy", "reference-legacy")}
for name, (code, state, reference_name) in stock_expected.items():
    stock_reference = show(reference_name + "-show.json")
    r = result(name + ".json") or {}
    check(rc(name) == 0 and r.get("path") == "full" and r.get("fullPath") == "nordic" and r.get("verified") is True
          and (r.get("reason") or {}).get("code") == code and not r.get("error"),
          f"{name}: exit {rc(name)}, path {r.get('path')} by {r.get('fullPath')}, reason {(r.get('reason') or {}).get('code')}, "
          f"verified {r.get('verified')} (expected full by nordic, {code})")
    shown = show(state + "-show.json")
    check(bool(stock_reference.get("applicationSHA256"))
          and shown.get("applicationSHA256") == stock_reference.get("applicationSHA256"),
          f"{name}: the stock board's application region equals a board given the file, byte for byte (SHA-256 "
          f"{shown.get('applicationSHA256', '?')[:16]}…)")
    check(shown.get("mode") == "application" and shown.get("flashIncomplete") is False
          and [g.get("hash") for g in shown.get("regions", [])] == [g.get("hash") for g in stock_reference.get("regions", [])],
          f"{name}: the stock board runs the new application (mode {shown.get('mode')}) with the file's region hashes")
stock_serve = text("serve-stock.log")
check(stock_serve.count("GATT application switched") >= 2 and "as \"DfuTarg\"" in stock_serve,
      "the stock board's GATT application switched to the bootloader's (DfuTarg) and back")
legacy_serve = text("serve-legacy.log")
check(legacy_serve.count("GATT application switched") >= 2 and "as \"DfuTarg\"" in legacy_serve,
      "the micro:bit V1's GATT application switched to its legacy bootloader's (DfuTarg) and back")

print()
print("bluetoothd version:", text("bluetoothd-version").strip() or "unknown")
hci = text("hci.txt")
mtus = sorted(set(re.findall(r"(?:Client|Server) RX MTU: (\d+)", hci)))
intervals = re.findall(r"Connection interval: ([\d.]+ msec)", hci)
served_mtu = re.search(r"ATT MTU (\d+)", serve)
print("ATT MTU exchanged (HCI trace):", ", ".join(mtus) or "none seen",
      f"; largest MTU BlueZ gave the board's writes: {served_mtu.group(1) if served_mtu else 'unknown'}")
print("connection interval (HCI trace, per connection or update):",
      ", ".join(sorted(set(intervals), key=intervals.index)) or "none seen", f"({len(intervals)} events)")
print()
stopped = re.search(r"stopped: .*", serve)
print("the served board:", stopped.group(0) if stopped else "no stop line")
print()
print(f"{'flash':<20}{'path':<12}{'bytes':>9}{'modelled s':>12}{'real s':>9}{'wall s':>9}")
for name in list(expected) + list(stock_expected):
    r, model = result(name + ".json") or {}, result(name + ".model.json") or {}
    print(f"{name:<20}{str(r.get('path')):<12}{r.get('bytesSent', 0):>9}{model.get('seconds', float('nan')):>12.2f}"
          f"{r.get('seconds', float('nan')):>9.2f}{text(name + '.wall').strip() or '?':>9}")
print("(modelled: the same flash with --simulate microbit-v2-mcuboot, or microbit-v2 / microbit-v1 for the stock boards, and its link model; real: bitflash's own "
      "figure over the real bluetoothd, in the VM under software emulation; wall: the whole command)")

if failures:
    print(f"\n{len(failures)} check(s) failed; the guest's files are in {out}")
    sys.exit(1)
