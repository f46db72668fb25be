import Foundation
import Testing
import TestSupport

/// How a flash is shown: plain timestamped lines in a pipe, live bars on a terminal, `-v` traces.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct OutputModeTests {
    let state: URL
    init() throws { state = try BitflashBinary.temporaryDirectory() }

    func flash(_ extra: [String], environment: [String: String] = [:]) throws -> BitflashBinary.Result {
        try BitflashBinary.run(
            ["flash", BitflashBinary.sample("sample-r1-counter.hex").path, "--simulate", "--sim-state", state.path]
                + extra,
            environment: environment)
    }

    @Test func aPipeGetsPlainTimestampedLinesWithoutEscapeCodes() throws {
        let r = try flash([])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("\u{1B}"))
        let stamp = #/^\[ *\d+\.\d{3} s\] sim: /#
        #expect(r.lines.allSatisfy { $0.contains(stamp) }, "\(r.stdout)")
        #expect(r.lines.contains { $0.hasSuffix("sim: partial") })
        #expect(r.lines.contains { $0.contains(#/100% \((\d+)\/\1 (bytes|blocks)\)/#) }, "\(r.stdout)")
        let last = try #require(r.lines.last)
        #expect(
            last.contains("sim: partial, ") && last.contains(#/8,\d\d\d bytes/#) && last.contains("verified"), "\(last)"
        )
        // The reason was given once, by the decision line; the result line does not repeat it.
        #expect(
            r.lines.contains {
                $0.contains("decision: the board runs the same runtime") && $0.hasSuffix("[runtime-matches]")
            })
        #expect(!last.contains("runtime"), "\(last)")
        // Times never go backwards.
        let times = r.lines.compactMap { line in line.firstMatch(of: #/\[ *(\d+\.\d+) s\]/#).flatMap { Double($0.1) } }
        #expect(times == times.sorted())
    }

    @Test func aTerminalGetsOneBarRedrawnInPlaceAndACheckMarkLine() throws {
        // A terminal wide enough for every column (a narrower one drops the rate and time left first).
        let r = try flash([], environment: ["BITFLASH_FORCE_TTY": "1", "COLUMNS": "120"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\u{1B}[?25l"), "the cursor is hidden while the bar is live")
        #expect(r.stdout.hasSuffix("\u{1B}[?25h"), "and shown again at the end")
        #expect(r.stdout.contains("\u{1B}[1F"), "the bar is redrawn in place")
        #expect(r.stdout.contains("█") && r.stdout.contains("░"))
        #expect(r.stdout.contains(" 50%") || r.stdout.contains(" 51%"))
        #expect(r.stdout.contains("100%"))
        #expect(r.stdout.contains("ETA "))
        #expect(r.stdout.contains("KB/s"))
        // Every redraw clears what is left of the line, so a shorter line leaves no garbage.
        let frames = r.stdout.components(separatedBy: "\r").dropFirst()
        #expect(frames.allSatisfy { $0.contains("\u{1B}[K") })
        let final = try #require(frames.last)
        #expect(final.hasPrefix("sim           ✔ partial, "), "\(final)")
        // Throttled: far fewer redraws than the 129 blocks' progress events.
        #expect(frames.count < 129 + 10)
    }

    @Test func verboseLogsProtocolBytesInHexOnStandardError() throws {
        let quiet = try flash([])
        #expect(quiet.stderr.isEmpty)
        let v = try flash(["-v"])
        #expect(v.status == 0)
        // STATUS request and the board's answer (docs/protocols/partial-flashing.md): `EE` then `EE 01 ...`.
        #expect(v.stderr.contains("sim: → EE"), "\(v.stderr.prefix(600))")
        #expect(v.stderr.contains("sim: ← EE 01"))
        #expect(!v.stdout.contains("→"), "traces go to standard error, results stay on standard output")
        let vv = try flash(["-vv"])
        #expect(vv.stderr.count > v.stderr.count)
        #expect(vv.stderr.contains(" sim write: ") || vv.stderr.contains(" sim notify: "), "\(vv.stderr.prefix(600))")
    }

    @Test func aClassSetPrintsASummaryTable() throws {
        let r = try flash(["--boards", "3"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("board  name   address            result  path     time    verified  fix"),
            "\(r.stdout.suffix(500))")
        #expect(r.stdout.contains("3 of 3 boards flashed"))
        for name in ["sim-1", "sim-2", "sim-3"] {
            #expect(r.lines.contains { $0.hasPrefix(name) && $0.contains("partial") })
        }
    }
}
