#!/usr/bin/env python3
"""The short account of one `swift test` run, for scripts/test.

    test-report.py LOG [XUNIT]

LOG is the run's whole output; XUNIT, when it exists, is Swift Testing's xUnit file of the same
run (`swift test --xunit-output X.xml` writes X-swift-testing.xml), which names each test's
target. Prints, first, one line "PASSED FAILED SKIPPED" for the script; then, for people, the
run's closing line, the tests per test target, what was skipped and why, and every failure in
full.

Swift Testing runs the tests in parallel and times each from its start: on two cores every test
starts within the first seconds and waits for a thread, so each reports about the whole run's
time. Those per-test times say nothing, so they are not repeated here; the phase's own
duration is.
"""
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, OrderedDict
from pathlib import Path

log = Path(sys.argv[1]).read_text(errors="replace").splitlines()
xunit = Path(sys.argv[2]) if len(sys.argv) > 2 else None

RUN = re.compile(r"^[^\s]+ Test run with (\d+) tests?(?: in (\d+) suites?)? (passed|failed)")
PASSED = re.compile(r"^[^\s]+ Test (?!run with).* passed after ")
FAILED = re.compile(r"^[^\s]+ Test (?!run with).* failed after ")
SKIPPED = re.compile(r"^[^\s]+ (Test|Suite) (.+?) skipped(?:: \"?(.*?)\"?)?\.?$")
ISSUE = re.compile(r"^[^\s]+ Test .* recorded an issue")
XCTEST = re.compile(r"Executed (\d+) tests?, with (\d+) failures?")

passed = sum(1 for line in log if PASSED.match(line))
failed = sum(1 for line in log if FAILED.match(line))
skips = OrderedDict()
for line in log:
    m = SKIPPED.match(line)
    if m:
        skips.setdefault(m.group(3) or "no reason given", []).append(f"{m.group(1).lower()} {m.group(2)}")
skipped = sum(len(v) for v in skips.values())
xctest_run = xctest_failed = 0
for line in log:
    m = XCTEST.search(line)
    if m:
        xctest_run, xctest_failed = int(m.group(1)), int(m.group(2))
passed += xctest_run - xctest_failed
failed += xctest_failed
print(passed, failed, skipped)

closing = [line for line in log if RUN.match(line)]
print("   " + (closing[-1] if closing else "no Swift Testing closing line: the test run did not finish (see the log)"))
if xctest_run:
    print(f"   XCTest: {xctest_run} tests, {xctest_failed} failed")

# Tests per target, from the xUnit file's class names (Target.Suite).
if xunit and xunit.exists():
    try:
        per_target = Counter()
        for case in ET.parse(xunit).getroot().iter("testcase"):
            per_target[case.get("classname", "?").split(".")[0]] += 1
        if per_target:
            items = [f"{name} {count}" for name, count in sorted(per_target.items())]
            lines, current = [], "   tests per target:"
            for item in items:
                if len(current) + len(item) + 2 > 100:
                    lines.append(current)
                    current = "    "
                current += f" {item},"
            lines.append(current.rstrip(","))
            print("\n".join(lines))
    except ET.ParseError:
        pass

if skips:
    print(f"   skipped ({skipped}):")
    for reason, what in skips.items():
        print(f"     {len(what)} × {reason}" + (f" ({what[0]})" if len(what) == 1 else ""))
# What tests print themselves when they leave a check out (a missing tool or corpus file).
own = Counter(line.strip() for line in log
              if re.search(r"\bskip", line, re.I) and not SKIPPED.match(line) and not line.startswith(("✔", "✘", "◇", "↳", "➜")))
if own:
    print(f"   checks the tests left out, in their words ({sum(own.values())}):")
    for text, n in own.most_common(12):
        print(f"     {n} × {text[:160]}")
    if len(own) > 12:
        print(f"     … and {len(own) - 12} more kinds (see the log)")

if failed:
    print("   failures:")
    keep = False
    shown = 0
    for line in log:
        if ISSUE.match(line) or FAILED.match(line):
            keep = True
        elif not line.startswith(("↳", " ", "\t")):
            keep = False
        if keep and shown < 400:
            print("     " + line)
            shown += 1
