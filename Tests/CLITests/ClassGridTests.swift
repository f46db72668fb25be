import Foundation
import Synchronization
import Testing
import TestSupport

@testable import Commands
@testable import Flashing

/// The class grid's lines, from the events of real simulated classes: `flash --simulate
/// --boards 8` run through the command's own code, its output recorded and replayed into the
/// grid at chosen moments.
@Suite(.enabled(if: BitflashBinary.labURL != nil, "bitflash-lab not built: the sample files cannot be written"))
struct ClassGridTests {
    /// Everything the command gave its output, in order.
    enum Moment: Sendable {
        case event(FlashEvent)
        case result(FlashResult)
        case preview(ClassPreview)
        case identities([String: BoardIdentity])
    }

    final class Recorder: FlashOutput, Sendable {
        let moments = Mutex<[Moment]>([])
        func event(_ event: FlashEvent) { moments.withLock { $0.append(.event(event)) } }
        func result(_ result: FlashResult) { moments.withLock { $0.append(.result(result)) } }
        func classEstimate(_ preview: ClassPreview) { moments.withLock { $0.append(.preview(preview)) } }
        func identify(_ identities: [String: BoardIdentity]) { moments.withLock { $0.append(.identities(identities)) } }
        func finish(_ results: [FlashResult], identities: [String: BoardIdentity]) {
            moments.withLock { $0.append(.identities(identities)) }
        }
    }

    /// Flashes `sample` to 8 fresh simulated boards and returns what the output was given.
    static func classOf8(_ sample: String, _ extra: [String] = []) async throws -> (boards: [String], [Moment]) {
        let state = try BitflashBinary.temporaryDirectory()
        let command = try FlashCommand.parse(
            [BitflashBinary.sample(sample).path, "--simulate", "--boards", "8", "--sim-state", state.path] + extra)
        let recorder = Recorder()
        let names = Mutex<[String]>([])
        _ = try await command.flashBoards(output: { _, boards, _ in
            names.withLock { $0 = boards }
            return recorder
        })
        return (names.withLock { $0 }, recorder.moments.withLock { $0 })
    }

    /// The grid fed `moments` up to (not including) the first for which `stop` is true.
    static func grid(_ boards: [String], _ moments: [Moment], until stop: (Moment) -> Bool = { _ in false })
        -> ClassGrid
    {
        var grid = ClassGrid(boards: boards)
        for m in moments {
            if stop(m) { break }
            switch m {
            case .event(let e): grid.apply(e)
            case .result(let r): grid.apply(r)
            case .preview(let p): grid.apply(p)
            case .identities(let ids): grid.apply(ids)
            }
        }
        return grid
    }

    /// Half-way: once the first board has written half of what it sends.
    static func halfWay(_ m: Moment) -> Bool {
        guard case .event(let e) = m, case let .progress(done, total, _) = e.report else { return false }
        return done * 2 >= total
    }

    @Test("mid-class at 120 columns: a line per board with address and path, bars with rate and ETA, and the counts")
    func midClassAtWideWidth() async throws {
        let (boards, moments) = try await Self.classOf8("sample-r2-heart.hex")
        #expect(boards == (1...8).map { "sim-\($0)" })
        let grid = Self.grid(boards, moments, until: Self.halfWay)
        let lines = grid.lines(columns: 120)
        #expect(lines.count == 9)
        #expect(lines.allSatisfy { $0.count < 120 }, "\(lines)")
        // The simulated adapter takes 5 boards at once (the estimate says so): 3 wait their turn.
        let preview = try #require(
            moments.lazy.compactMap { if case .preview(let p) = $0 { p } else { nil } }.first)
        let limit = try #require(preview.adapters.first?.connectionLimit)
        #expect(
            lines[0].hasPrefix("8 boards: 0 done, 0 failed, \(limit) flashing, \(8 - limit) waiting; class ETA "),
            "\(lines[0])")
        for (i, board) in boards.enumerated() {
            let line = lines[i + 1]
            if i < limit {
                #expect(line.hasPrefix("\(board)  F0:0D:00:00:00:0\(i + 1)  McuMgr  "), "\(line)")
                #expect(line.contains("█") || line.contains("░"), "\(line)")
                #expect(line.contains(#/\d+%  \d+\.\d KB\/s  ETA \d+\.\d+ s$/#), "\(line)")
            } else {
                // No path until the board's own session chooses one.
                #expect(line == "\(board)  F0:0D:00:00:00:0\(i + 1)  -           waiting", "\(line)")
            }
        }
    }

    @Test("at 60 columns the address and rate are dropped, never wrapped; bar, percent and ETA stay")
    func midClassAtNarrowWidth() async throws {
        let (boards, moments) = try await Self.classOf8("sample-r1-counter.hex")
        let grid = Self.grid(boards, moments, until: Self.halfWay)
        let lines = grid.lines(columns: 60)
        #expect(lines.count == 9)
        #expect(lines.allSatisfy { $0.count < 60 }, "\(lines.joined(separator: "\n"))")
        #expect(!lines.contains { $0.contains("F0:0D") || $0.contains("KB/s") }, "\(lines)")
        #expect(lines[0].hasPrefix("8 boards: 0 done, 0 failed, "), "\(lines[0])")
        #expect(!lines[0].contains("flashing"), "the narrow header leaves out the boards under way")
        #expect(lines[1].contains(#/^sim-1  partial +\[[█░]+\] +\d+%  ETA \d+\.\d+ s$/#), "\(lines[1])")
        let wide = grid.lines(columns: 120)
        #expect(wide[1].contains("F0:0D:00:00:00:01") && wide[1].contains("KB/s"), "\(wide[1])")
    }

    @Test("a terminal too short for the class keeps the boards under way and counts the others")
    func shortTerminalFoldsTheGrid() async throws {
        let (boards, moments) = try await Self.classOf8("sample-r2-heart.hex")
        let half = Self.grid(boards, moments, until: Self.halfWay)
        // 8 rows: 7 lines at most (the cursor's row is below them).
        let lines = half.lines(columns: 60, rows: 8)
        #expect(lines.count == 7, "\(lines)")
        #expect(lines.dropFirst().prefix(5).map { String($0.prefix(5)) } == (1...5).map { "sim-\($0)" })
        #expect(lines.dropFirst().prefix(5).allSatisfy { $0.contains("%") }, "the boards under way: \(lines)")
        #expect(lines.last == "… 3 more: 3 waiting")
        // Room enough: every board.
        #expect(half.lines(columns: 60, rows: 10).count == 9)
        #expect(half.lines(columns: 60).count == 9)
        // A failed board is kept before any done one.
        var grid = Self.grid(boards, moments)
        var failed = try #require(
            moments.lazy.compactMap { if case .result(let r) = $0, r.board == "sim-8" { r } else { nil } }.first)
        failed.error = "the board stopped answering"
        grid.apply(failed)
        let end = grid.lines(columns: 60, rows: 8)
        #expect(end.dropFirst().prefix(5).map { String($0.prefix(5)) } == ["sim-1", "sim-2", "sim-3", "sim-4", "sim-8"])
        #expect(end[5].contains("✘ failed: the board stopped answering"), "\(end)")
        #expect(end.last == "… 3 more: 3 done")
    }

    @Test("after the class every board's line says verified with its time, and the header counts 8 done")
    func endOfClass() async throws {
        let (boards, moments) = try await Self.classOf8("sample-r1-counter.hex")
        // A simulated class's results come at its end: each session's own `done` comes first.
        let sessionsDone = Self.grid(boards, moments) { if case .result = $0 { true } else { false } }
        let before = sessionsDone.lines(columns: 60)
        #expect(before[0] == "8 boards: 8 done, 0 failed, 0 flashing, 0 waiting", "\(before[0])")
        #expect(before.dropFirst().allSatisfy { $0.contains(#/partial +✔ done at \d+\.\d+ s$/#) }, "\(before)")
        let grid = Self.grid(boards, moments)
        for columns in [60, 120] {
            let lines = grid.lines(columns: columns)
            #expect(lines[0].hasPrefix("8 boards: 8 done, 0 failed, "), "\(lines[0])")
            #expect(lines[0].contains("; ended in "), "\(lines[0])")
            #expect(!lines[0].contains("ETA"))
            for (i, board) in boards.enumerated() {
                #expect(lines[i + 1].contains(#/^sim-\d  .*partial +✔ verified, \d+\.\d+ s$/#), "\(lines[i + 1])")
                #expect(lines[i + 1].hasPrefix(board + "  "))
            }
        }
    }

    @Test("a class stopped part-way: each failed board's line gives the reason, cut to the width")
    func failedBoardsGiveTheirReason() async throws {
        // The laboratory's --sim-kill-at stops the class as if bitflash were killed; its results
        // are read from its JSON lines.
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.lab([
            "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--simulate", "--boards", "8", "--sim-state",
            state.path, "--sim-kill-at", "3", "--json"
        ])
        let failed = try run.stdout.split(separator: "\n").filter { $0.contains(#""type":"result""#) }.map {
            try JSONDecoder().decode(FlashResult.self, from: Data($0.utf8))
        }
        #expect(failed.count == 8 && failed.allSatisfy { $0.error != nil }, "every board was stopped at 3 s")
        let boards = (1...8).map { "sim-\($0)" }
        var grid = ClassGrid(boards: boards)
        for r in failed { grid.apply(r) }
        let wide = grid.lines(columns: 200)
        #expect(wide[0].hasPrefix("8 boards: 0 done, 8 failed, 0 flashing, 0 waiting"), "\(wide[0])")
        for r in failed {
            let line = try #require(wide.first { $0.hasPrefix(r.board + "  ") })
            #expect(line.contains("✘ failed: " + String(r.error!.prefix(60))), "\(line)")
        }
        let narrow = grid.lines(columns: 60)
        #expect(narrow.allSatisfy { $0.count < 60 })
        #expect(narrow.dropFirst().allSatisfy { $0.contains("✘ failed: ") && $0.hasSuffix("…") }, "\(narrow)")
    }

    @Test("colours mark each result on the same text, and NO_COLOR or a dumb terminal turns them off")
    func coloursAndNoColor() async throws {
        let (boards, moments) = try await Self.classOf8("sample-r1-counter.hex")
        let grid = Self.grid(boards, moments)
        let plain = grid.lines(columns: 80)
        let painted = grid.lines(columns: 80, color: true)
        #expect(painted.dropFirst().allSatisfy { $0.hasPrefix("\u{1B}[32m") && $0.hasSuffix("\u{1B}[0m") })
        let stripped = painted.map { $0.replacing(#/\x1B\[\d+m/#, with: "") }
        #expect(stripped == plain)
        #expect(GridOutput.colors(["TERM": "xterm-256color"]))
        #expect(!GridOutput.colors(["TERM": "xterm-256color", "NO_COLOR": "1"]))
        #expect(GridOutput.colors(["TERM": "xterm-256color", "NO_COLOR": ""]), "an empty NO_COLOR is not set")
        #expect(!GridOutput.colors(["TERM": "dumb"]))
    }
}
