#!/usr/bin/env python3
"""Per-block timing of partial flashing, from the HCI trace of the real-stack test.

    hci-blocks.py HCI_SNOOP [STEPS]

HCI_SNOOP is the btsnoop file `btmon -w` writes (Linux monitor format, datalink 2001); a file
cut short in the middle of a record (the VM powered off under btmon) is read up to the cut.
STEPS (optional) has one line per command of the guest test: NAME START END (Unix seconds),
and splits the blocks by the flash they belong to.

On the controller that sends the FLASH_DATA write commands (ATT Write Command, opcode 0x52,
value `01 ...`, partial-flashing-protocol.md §2.2), a block is the run of writes between two
answers; it takes from its first write to the next `01 FF` (or `01 AA`) notification
(opcode 0x1B; between two BlueZ hosts bluetoothd sends Multiple Handle Value Notifications,
opcode 0x23, which count the same). Per flash: the number of blocks, the p50/p90/max of that time in milliseconds
and in connection intervals (from LE Connection Complete / Connection Update Complete), the
spread of each block's writes (first to last), and what the link model expects: two intervals
per block (the writes in one connection event, the answer in the next), plus the page erase
(85 ms on nRF52833, DeviceTiming) for a block that starts a 4 KiB page.

btvirt passes packets between its two controllers at once: the intervals the trace states
are negotiated, not kept, so the figures are the hosts' own delays, expressed in intervals.
Python 3 standard library only.
"""
import math
import struct
import sys

MONITOR = 2001
ACL_TX, ACL_RX, EVENT = 4, 5, 3
# btsnoop time: microseconds since 2000-01-01 plus this offset (BlueZ src/shared/btsnoop.c).
EPOCH_OFFSET = 0x00E03AB44A676000
UNIX_2000 = 946684800
PAGE = 4096
ERASE_MS = 85.0


def records(path):
    """(unix seconds, index, opcode, data) of every whole record; and whether the file was cut."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 16 or blob[:8] != b"btsnoop\0":
        raise SystemExit(f"{path}: not a btsnoop file")
    _, datalink = struct.unpack(">II", blob[8:16])
    if datalink != MONITOR:
        raise SystemExit(f"{path}: datalink {datalink}, expected {MONITOR} (btmon -w)")
    out, pos, cut = [], 16, False
    while pos < len(blob):
        if pos + 24 > len(blob):
            cut = True
            break
        _, incl, flags, _, ts = struct.unpack(">IIIIq", blob[pos:pos + 24])
        if pos + 24 + incl > len(blob):
            cut = True
            break
        data = blob[pos + 24:pos + 24 + incl]
        pos += 24 + incl
        seconds = (ts - EPOCH_OFFSET) / 1e6 + UNIX_2000
        out.append((seconds, flags >> 16, flags & 0xFFFF, data))
    return out, cut


def att_pdus(recs):
    """(time, index, direction, handle, ATT PDU) of every ATT PDU on the LE fixed channel,
    reassembling L2CAP fragments per controller, connection and direction."""
    partial = {}
    for t, index, opcode, data in recs:
        if opcode not in (ACL_TX, ACL_RX) or len(data) < 4:
            continue
        word, length = struct.unpack("<HH", data[:4])
        handle, pb = word & 0x0FFF, (word >> 12) & 0x3
        payload = data[4:4 + length]
        key = (index, handle, opcode)
        if pb == 0x1:  # continuation
            if key not in partial:
                continue
            t0, buf, need = partial[key]
            buf += payload
        else:
            if len(payload) < 4:
                continue
            need = struct.unpack("<H", payload[:2])[0] + 4
            t0, buf = t, payload
        if len(buf) < need:
            partial[key] = (t0, buf, need)
            continue
        partial.pop(key, None)
        cid = struct.unpack("<H", buf[2:4])[0]
        if cid == 0x0004:
            yield t0, index, opcode, handle, buf[4:need]


def intervals(recs):
    """(time, index, handle, interval ms) from LE Connection Complete and Update Complete."""
    for t, index, opcode, data in recs:
        if opcode != EVENT or len(data) < 3 or data[0] != 0x3E:
            continue
        sub, p = data[2], data[3:]
        if sub == 0x01 and len(p) >= 18 and p[0] == 0:
            yield t, index, struct.unpack("<H", p[1:3])[0], struct.unpack("<H", p[11:13])[0] * 1.25
        elif sub == 0x0A and len(p) >= 30 and p[0] == 0:
            yield t, index, struct.unpack("<H", p[1:3])[0], struct.unpack("<H", p[23:25])[0] * 1.25
        elif sub == 0x03 and len(p) >= 9 and p[0] == 0:
            yield t, index, struct.unpack("<H", p[1:3])[0], struct.unpack("<H", p[3:5])[0] * 1.25


def notified_values(pdu):
    """The values of a Handle Value Notification (0x1B) or Multiple Handle Value Notification (0x23)."""
    if pdu[:1] == b"\x1b" and len(pdu) >= 3:
        return [pdu[3:]]
    values, pos = [], 1
    while pdu[:1] == b"\x23" and pos + 4 <= len(pdu):
        length = struct.unpack("<H", pdu[pos + 2:pos + 4])[0]
        values.append(pdu[pos + 4:pos + 4 + length])
        pos += 4 + length
    return values


def flash_answer(pdu):
    """`01 FF` or `01 AA` when the notification answers a FLASH_DATA block, else None."""
    for value in notified_values(pdu):
        if len(value) >= 2 and value[0] == 0x01 and value[1] in (0xFF, 0xAA):
            return "01 FF" if value[1] == 0xFF else "01 AA"
    return None


def blocks(recs):
    """The partial-flashing blocks the central wrote: dicts with start, end, spread, writes,
    address, the answer, and the connection interval in force."""
    known = {}
    for t, index, handle, ms in intervals(recs):
        known.setdefault((index, handle), []).append((t, ms))

    def interval(index, handle, t):
        ms = None
        for when, value in known.get((index, handle), []):
            if when <= t:
                ms = value
        return ms

    out, current = [], {}
    for t, index, opcode, handle, pdu in att_pdus(recs):
        key = (index, handle)
        if opcode == ACL_TX and len(pdu) == 23 and pdu[0] == 0x52 and pdu[3] == 0x01:
            value = pdu[3:]
            block = current.setdefault(key, {"times": [], "values": []})
            block["times"].append(t)
            block["values"].append(value)
        elif opcode == ACL_RX and (answer := flash_answer(pdu)):
            block = current.pop(key, None)
            if not block:
                continue
            values, times = block["values"], block["times"]
            address = None
            if len(values) >= 2:
                address = (values[1][1] << 24) | (values[1][2] << 16) | (values[0][1] << 8) | values[0][2]
            out.append({"start": times[0], "end": t, "spread": times[-1] - times[0], "writes": len(times),
                        "answer": answer, "address": address,
                        "interval": interval(index, handle, times[0])})
    return out


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def steps_of(path):
    steps = []
    if path:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    steps.append((parts[0], float(parts[1]), float(parts[2])))
    return steps


def report(snoop, steps_path=None):
    recs, cut = records(snoop)
    found = blocks(recs)
    steps = steps_of(steps_path) or [("all", float("-inf"), float("inf"))]
    print(f"HCI trace: {len(recs)} records{' (cut short at the end: read up to the cut)' if cut else ''}, "
          f"{len(found)} partial-flashing blocks")
    header = (f"{'flash':<22}{'blocks':>7}{'interval':>10}{'p50 ms':>9}{'p90 ms':>9}{'max ms':>9}"
              f"{'p50 ev':>8}{'p90 ev':>8}{'max ev':>8}{'spread p50/max ms':>19}{'model ms':>17}{'retried':>9}")
    print(header)
    for name, start, end in steps:
        mine = [b for b in found if start <= b["start"] <= end]
        if not mine:
            continue
        ms = [(b["end"] - b["start"]) * 1000 for b in mine]
        iv = [b["interval"] for b in mine if b["interval"]]
        interval = percentile(iv, 50) if iv else float("nan")
        events = [m / interval for m in ms] if iv else []
        spread = [b["spread"] * 1000 for b in mine]
        page_starts = sum(1 for b in mine if b["address"] is not None and b["address"] % PAGE == 0)
        model_plain = 2 * interval
        model_page = 2 * interval + math.ceil(ERASE_MS / interval) * interval if iv else float("nan")
        retried = sum(1 for b in mine if b["writes"] != 4 or b["answer"] != "01 FF")
        print(f"{name:<22}{len(mine):>7}{interval:>8.2f}ms{percentile(ms, 50):>9.1f}{percentile(ms, 90):>9.1f}{max(ms):>9.1f}"
              f"{percentile(events, 50):>8.2f}{percentile(events, 90):>8.2f}{max(events) if events else float('nan'):>8.2f}"
              f"{percentile(spread, 50):>10.1f}/{max(spread):<8.1f}{model_plain:>8.0f}/{model_page:<8.0f}{retried:>9}")
    print("(a block: its first write to its answer. ev: that time in connection intervals. spread: first to last write "
          "of a block. model: 2 intervals per block / at a page start 2 intervals + the 85 ms erase in whole intervals "
          f"({sum(1 for b in found if b['address'] is not None and b['address'] % PAGE == 0)} page starts). "
          "retried: blocks with other than 4 writes or answered 01 AA. btvirt forwards packets at once, so the "
          "intervals are negotiated, not kept: the times are the hosts' delays.)")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__.strip().splitlines()[2])
    report(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
