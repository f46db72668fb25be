import Foundation
import Testing
import TestSupport

/// A class set: eight simulated boards flashed at once on one adapter radio.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct ClassSetTests {
    func resultSeconds(_ r: BitflashBinary.Result) throws -> [Double] {
        try r.lines.compactMap { line -> Double? in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard object["type"] as? String == "result" else { return nil }
            #expect(object["path"] as? String == "partial")
            #expect(object["verified"] as? Bool == true)
            return object["seconds"] as? Double
        }
    }

    func applicationHashes(_ state: URL) throws -> [String] {
        let show = try BitflashBinary.run(["sim", "show", "--json", "--sim-state", state.path])
        let boards = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [[String: Any]])
        return boards.compactMap { $0["applicationSHA256"] as? String }
    }

    @Test func eightBoardsInParallelFinishWellBeforeEightInARowAndAreByteExact() throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        // Stock micro:bit V2 boards (partial flashing only): their application region holds nothing
        // but the runtime and the program, so a flashed board and one given the file compare byte for byte.
        let profile = ["--simulate", "microbit-v2"]
        // One board: the time of each of eight flashes in a row (the boards and the run are identical and deterministic).
        let single = try BitflashBinary.temporaryDirectory()
        let one = try BitflashBinary.run(["flash", file, "--sim-state", single.path, "--json"] + profile)
        #expect(one.status == 0, "\(one.stderr)")
        let oneBoard = try #require(try resultSeconds(one).first)

        let parallel = try BitflashBinary.temporaryDirectory()
        let eight = try BitflashBinary.run(
            ["flash", file, "--boards", "8", "--sim-state", parallel.path, "--json"] + profile)
        #expect(eight.status == 0, "\(eight.stderr)")
        let times = try resultSeconds(eight)
        #expect(times.count == 8)
        let together = try #require(times.max())
        let inARow = 8 * oneBoard
        // Clearly less: at most a third of the time in a row (the radio is busy only part of each interval).
        #expect(together < inARow / 3, "8 in parallel \(together) s against 8 in a row \(inARow) s")
        #expect(together >= oneBoard, "sharing the radio cannot make a board faster")

        // Byte-exact: every board's application region equals a board that was given the file directly.
        let reference = try BitflashBinary.temporaryDirectory()
        _ = try BitflashBinary.run([
            "sim", "reset", "--profile", "microbit-v2", "--from", file, "--sim-state", reference.path
        ])
        let expected = try #require(try applicationHashes(reference).first)
        let hashes = try applicationHashes(parallel)
        #expect(hashes.count == 8)
        #expect(hashes.allSatisfy { $0 == expected })
        #expect(try applicationHashes(single) == [expected])
        print("class set: one board \(oneBoard) s, 8 in a row \(inARow) s, 8 in parallel \(together) s")
    }

    struct ClassSet: Sendable, CustomTestStringConvertible {
        var boards: Int
        var link: String
        var testDescription: String { "\(boards) boards, \(link)" }
    }

    static let classSets = [16, 32].flatMap { n in
        ["linux-default", "device-requested", "fast"].map { ClassSet(boards: n, link: $0) }
    }

    /// Every genuine answer counts, however long a busy adapter makes it take: 16 or 32 boards
    /// sharing one radio, no fault injected, flash without a single retry.
    @Test(arguments: classSets)
    func aBigClassSetFlashesEveryBoardWithoutARetry(_ set: ClassSet) throws {
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let state = try BitflashBinary.temporaryDirectory()
        let run = try BitflashBinary.run([
            "flash", file, "--simulate", "microbit-v2", "--boards", "\(set.boards)",
            "--link", set.link, "--sim-state", state.path, "--json"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let results = try run.lines.compactMap { line -> [String: Any]? in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object["type"] as? String == "result" ? object : nil
        }
        #expect(results.count == set.boards)
        for r in results {
            #expect(r["path"] as? String == "partial" && r["verified"] as? Bool == true, "\(r["board"] ?? "?")")
            #expect(r["retries"] as? Int == 0, "\(r["board"] ?? "?"): \(r["retries"] ?? "?") retries")
        }
        let seconds = results.compactMap { $0["seconds"] as? Double }.sorted()
        if let slowest = seconds.last, !seconds.isEmpty {
            print(
                "class set of \(set.boards) on \(set.link): median \(seconds[seconds.count / 2]) s, slowest \(slowest) s"
            )
        }
    }
}
