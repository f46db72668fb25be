import Foundation
import Testing
import TestSupport

/// The progress bars fit the terminal they are drawn on: bitflash runs in a tmux pane of 80 and
/// of 60 columns (`stty cols` says the same), and the screen tmux keeps is read after the run.
/// A redrawn line that wrapped would leave a row of bar behind at every redraw.
@Suite(
    .enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"),
    .enabled(if: ExternalProcess.onPath("tmux") != nil, "tmux not installed: terminal-width tests skipped"))
struct TerminalWidthTests {
    /// Runs `arguments` in a detached tmux pane `columns` wide and returns the screen's rows
    /// (history included) once the command has ended: one shell runs tmux's steps, `wait-for`
    /// telling it when the command is done. The server's own output goes to /dev/null, so that
    /// the pipe read here ends with the shell.
    /// - Parameters:
    ///   - prefix: words run before the binary (`env NO_COLOR=1`).
    ///   - escapes: keep the screen's colours, as SGR codes (`capture-pane -e`).
    ///   - rows: the pane's height.
    static func screen(
        columns: Int, _ arguments: [String], prefix: [String] = [], escapes: Bool = false, rows: Int = 50
    ) throws -> [String] {
        let tmux = try #require(ExternalProcess.onPath("tmux")).path
        let socket = "bitflash-width-\(UUID().uuidString.prefix(8))"
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let binary = try #require(BitflashBinary.url).path
        let tm = "\(quote(tmux)) -u -L \(socket) -f /dev/null"
        let command =
            "stty cols \(columns) rows \(rows); \((prefix + [binary] + arguments).map(quote).joined(separator: " ")); "
            + "\(tm) wait-for -S finished; sleep 600"
        let script = """
            \(tm) new-session -d -x \(columns) -y \(rows) -e TERM=xterm-256color -e LANG=C.UTF-8 \(quote(command)) \
                </dev/null >/dev/null 2>&1
            \(tm) wait-for finished
            \(tm) capture-pane -p \(escapes ? "-e " : "")-S -2000
            \(tm) kill-server >/dev/null 2>&1
            """
        return try Self.lines(ofShell: script)
    }

    /// Runs `script` with /bin/sh and returns what it printed, line by line.
    static func lines(ofShell script: String) throws -> [String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
    }

    /// Runs the paced demo in a tmux pane 120 wide, narrows the window to 60 columns once a bar
    /// is drawn (tmux sets the pane's size, and the kernel sends SIGWINCH), and returns the
    /// screen once a bar was drawn at the new width: the very capture that showed it, since a
    /// bar may end (its line becomes the result) before a second capture on a busy machine.
    /// Each wait is for what the screen shows, bounded (5 min, for a busy machine) so that a
    /// broken run ends the test instead of hanging it.
    static func screenAfterNarrowing() throws -> [String] {
        let tmux = try #require(ExternalProcess.onPath("tmux")).path
        let socket = "bitflash-resize-\(UUID().uuidString.prefix(8))"
        func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let binary = try #require(BitflashBinary.url).path
        let tm = "\(quote(tmux)) -u -L \(socket) -f /dev/null"
        let command = "stty cols 120 rows 50; \(quote(binary)) demo; sleep 600"
        // A bar at 60 columns: a row with a percentage, narrower than the window. Debian's awk
        // counts bytes, so the bar's three-byte cells are made one byte first.
        let narrowBar = #"sed 's/█/#/g; s/░/-/g' | awk 'length($0) < 60 && /[0-9]%/ { found = 1 } END { exit !found }'"#
        let script = """
            \(tm) new-session -d -x 120 -y 50 -e TERM=xterm-256color -e LANG=C.UTF-8 \(quote(command)) \
                </dev/null >/dev/null 2>&1
            n=0; until \(tm) capture-pane -p | grep -q '%'; do n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.1; done
            \(tm) resize-window -x 60 -y 50
            n=0; while :; do
                screen=$(\(tm) capture-pane -p -S -2000)
                printf '%s\\n' "$screen" | \(narrowBar) && break
                n=$((n+1)); [ $n -gt 3000 ] && break; sleep 0.1
            done
            printf '%s\\n' "$screen"
            \(tm) kill-server >/dev/null 2>&1
            """
        return try Self.lines(ofShell: script)
    }

    @Test("a window narrowed from 120 to 60 columns mid-flash: the bar is redrawn at 60, no old row stays behind")
    func aNarrowedWindowLeavesNoRowBehind() throws {
        let rows = try Self.screenAfterNarrowing()
        let bars = rows.filter {
            $0.contains("░") || $0.contains("█") || $0.range(of: #"\d+%"#, options: .regularExpression) != nil
        }
        // One live bar, drawn at the new width; a row of the bar drawn at 120 columns, which the
        // terminal rewrapped over two rows, would be a second.
        #expect(bars.count == 1, "\(bars.count) rows of bar:\n\(rows.joined(separator: "\n"))")
        #expect(bars.allSatisfy { $0.count < 60 }, "\(bars)")
    }

    @Test("at 80 and 60 columns a full update leaves no row of bar behind, and the last line says how it ended")
    func progressFitsTheTerminalsWidth() throws {
        let file = BitflashBinary.sample("sample-r2-heart.hex").path
        for columns in [80, 60] {
            let state = try BitflashBinary.temporaryDirectory()
            let rows = try Self.screen(
                columns: columns, ["flash", file, "--simulate", "microbit-v2", "--sim-state", state.path])
            // A left-behind row holds a bar, or its percentage.
            let bars = rows.filter {
                $0.contains("░") || $0.contains("█") || $0.range(of: #"\d+%"#, options: .regularExpression) != nil
            }
            #expect(bars.isEmpty, "\(columns) columns: \(bars.count) rows of bar left behind:\n\(bars.prefix(5))")
            #expect(rows.contains { $0.contains("✔") && $0.contains("full") }, "\(rows.joined(separator: "\n"))")
        }
    }
}
