import Foundation
import Testing
import TestSupport

/// The class grid on a real terminal: `flash --simulate --boards 8` runs in a tmux pane of 60
/// and of 120 columns, and the screen tmux keeps (history included) is read once the command
/// has ended (`TerminalWidthTests.screen`: tmux's `wait-for` says when). A grid line that wrapped,
/// or a redraw that missed its rows, would leave rows behind on that screen.
@Suite(
    .enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"),
    .enabled(if: ExternalProcess.onPath("tmux") != nil, "tmux not installed: terminal grid tests skipped"))
struct ClassGridTerminalTests {
    @Test("a class of 8 on a terminal of 60 and 120 columns: one grid left, a verified line per board, then the table")
    func classOf8OnATerminal() throws {
        let file = BitflashBinary.sample("sample-r2-heart.hex").path
        for columns in [60, 120] {
            let state = try BitflashBinary.temporaryDirectory()
            let rows = try TerminalWidthTests.screen(
                columns: columns, ["flash", file, "--simulate", "--boards", "8", "--sim-state", state.path])
            let screen = rows.joined(separator: "\n")
            #expect(rows.allSatisfy { $0.count <= columns }, "\(columns) columns:\n\(screen)")
            // The grid was redrawn in place: one header is left, the last one, counting 8 done.
            let headers = rows.indices.filter { rows[$0].hasPrefix("8 boards: ") }
            #expect(headers.count == 1, "\(columns) columns: \(headers.count) headers:\n\(screen)")
            let header = try #require(headers.first)
            #expect(rows[header].hasPrefix("8 boards: 8 done, 0 failed, "), "\(rows[header])")
            #expect(rows[header].count < columns)
            // Below it, a line per board, in order, each one row (none wrapped) and verified.
            let grid = rows[(header + 1)...].prefix(8)
            for (i, row) in zip(1...8, grid) {
                #expect(row.hasPrefix("sim-\(i)  "), "\(columns) columns: row \(i) is \(row)\n\(screen)")
                #expect(row.contains(#/McuMgr +✔ verified, \d+\.\d s$/#), "\(columns) columns: \(row)")
                #expect(row.count < columns)
            }
            #expect(columns < 100 || grid.allSatisfy { $0.contains("F0:0D:00:00:00:0") }, "\(Array(grid))")
            // No bar of a redraw is left behind; the class report follows the grid.
            #expect(!rows.contains { $0.contains("░") || $0.contains("█") }, "\(screen)")
            #expect(rows[(header + 9)...].contains { $0.hasPrefix("board  name") }, "\(screen)")
            #expect(rows.contains { $0.hasPrefix("8 of 8 boards flashed") }, "\(screen)")
        }
    }

    @Test("a terminal of 8 rows: the grid keeps to 7, the others counted on its last line, none scrolled away")
    func aShortTerminalGetsAFoldedGrid() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let rows = try TerminalWidthTests.screen(
            columns: 60, ["flash", file, "--simulate", "--boards", "8", "--sim-state", state.path], rows: 8)
        let screen = rows.joined(separator: "\n")
        // A grid taller than the terminal would scroll its header away at every redraw.
        let headers = rows.indices.filter { rows[$0].hasPrefix("8 boards: ") }
        #expect(headers.count == 1, "\(headers.count) headers:\n\(screen)")
        let header = try #require(headers.first)
        #expect(rows[header].hasPrefix("8 boards: 8 done, 0 failed, "), "\(rows[header])")
        for i in 1...5 {
            #expect(rows[header + i].contains(#/^sim-\d  partial +✔ verified/#), "\(screen)")
        }
        #expect(rows[header + 6] == "… 3 more: 3 done", "\(screen)")
        #expect(!rows.contains { $0.contains("░") || $0.contains("█") }, "\(screen)")
    }

    @Test("watch on a terminal: the grid while the boards are flashed, then wiped for watch's own lines")
    func watchWipesItsGrid() throws {
        let tmux = try #require(ExternalProcess.onPath("tmux")).path
        let binary = try #require(BitflashBinary.url).path
        let dir = try BitflashBinary.temporaryDirectory()
        let folder = dir.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The download is staged beside the folder and renamed into it at once.
        let staged = dir.appendingPathComponent("counter.hex")
        try FileManager.default.copyItem(at: BitflashBinary.sample("sample-r1-counter.hex"), to: staged)
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // What the pane was sent, escape codes and all (tmux pipe-pane).
        let raw = dir.appendingPathComponent("pane.raw")
        let tm = "\(quote(tmux)) -u -L bitflash-watch-\(UUID().uuidString.prefix(8)) -f /dev/null"
        let command =
            "stty cols 60 rows 50; "
            + [
                binary, "watch", folder.path, "--simulate", "--boards", "3", "--sim-state",
                dir.appendingPathComponent("boards").path
            ]
            .map(quote).joined(separator: " ") + "; sleep 600"
        // Each wait is for what the screen shows, bounded (5 min, for a busy machine).
        let script = """
            \(tm) new-session -d -x 60 -y 50 -e TERM=xterm-256color -e LANG=C.UTF-8 \(quote(command)) \
                </dev/null >/dev/null 2>&1
            \(tm) pipe-pane -o \(quote("cat >> " + quote(raw.path)))
            n=0; until \(tm) capture-pane -p | grep -q 'watching'; do n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.1; done
            mv \(quote(staged.path)) \(quote(folder.appendingPathComponent("counter.hex").path))
            n=0; until \(tm) capture-pane -p -S -2000 | grep -q 'sim-3:'; do
                n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.1
            done
            n=0; until grep -q '3 boards: 3 done' \(quote(raw.path)); do
                n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.1
            done
            \(tm) capture-pane -p -J -S -2000
            \(tm) kill-server >/dev/null 2>&1
            grep -q '3 boards: 3 done' \(quote(raw.path)) && echo 'the grid was drawn'
            """
        // Wrapped lines joined (-J): watch's lines are longer than the pane.
        let rows = try TerminalWidthTests.lines(ofShell: script)
        let screen = rows.joined(separator: "\n")
        #expect(rows.last { !$0.isEmpty } == "the grid was drawn", "\(screen)")
        let results = rows.filter { $0.contains("counter.hex → sim-") }
        #expect(results.count == 3, "\(screen)")
        #expect(results.allSatisfy { $0.hasSuffix("verified") }, "\(screen)")
        // Nothing of the grid is left: no header, no bar, no board line of its own.
        #expect(!rows.contains { $0.hasPrefix("3 boards: ") || $0.contains("░") || $0.contains("█") }, "\(screen)")
        #expect(!rows.contains { $0.hasPrefix("sim-") }, "\(screen)")
    }

    @Test("results are coloured on a terminal, and not at all with NO_COLOR; the text is the same")
    func noColorTurnsColoursOff() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        var screens: [[String]] = []
        // Whatever the tests' own environment says of NO_COLOR.
        for prefix in [["env", "-u", "NO_COLOR"], ["env", "NO_COLOR=1"]] {
            let state = try BitflashBinary.temporaryDirectory()
            let rows = try TerminalWidthTests.screen(
                columns: 80, ["flash", file, "--simulate", "--boards", "3", "--sim-state", state.path], prefix: prefix,
                escapes: true)
            screens.append(rows.filter { $0.contains("✔ verified") })
        }
        let (coloured, plain) = (screens[0], screens[1])
        #expect(coloured.count == 3 && plain.count == 3, "\(screens)")
        #expect(coloured.allSatisfy { $0.contains("\u{1B}[32m") }, "green: \(coloured)")
        #expect(plain.allSatisfy { !$0.contains("\u{1B}") }, "no SGR code at all: \(plain)")
        // The same words: a simulated class is deterministic.
        #expect(coloured.map { $0.replacing(#/\x1B\[[0-9;]*m/#, with: "") } == plain)
    }

    @Test("--plain on a terminal: the plain timestamped lines of a pipe, no grid; --json wins over it")
    func plainOnATerminal() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        func run(_ extra: [String]) throws -> BitflashBinary.Result {
            let state = try BitflashBinary.temporaryDirectory()
            return try BitflashBinary.run(
                ["flash", file, "--simulate", "--boards", "3", "--sim-state", state.path] + extra,
                environment: ["BITFLASH_FORCE_TTY": "1", "COLUMNS": "80"])
        }
        let grid = try run([])
        #expect(
            grid.status == 0 && grid.stdout.contains("3 boards: 3 done, 0 failed, 0 flashing, 0 waiting"),
            "\(grid.stdout)")
        let plain = try run(["--plain"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(!plain.stdout.contains("\u{1B}") && !plain.stdout.contains("3 boards: "), "\(plain.stdout)")
        #expect(plain.lines.contains { $0.contains(#/^\[ *\d+\.\d{3} s\] sim-2: partial$/#) }, "\(plain.stdout)")
        #expect(plain.lines.last == "3 of 3 boards flashed")
        let json = try run(["--plain", "--json"])
        #expect(json.lines.allSatisfy { $0.hasPrefix("{") }, "\(json.stdout)")
    }
}
