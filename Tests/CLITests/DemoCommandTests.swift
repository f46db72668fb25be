import Foundation
import Testing
import TestSupport

/// `bitflash demo`, run as a subprocess. Its standard output is a pipe, so it never waits:
/// the demo paces modelled time only for a person at a terminal.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct DemoCommandTests {
    /// The lines of one step, from its `== N.` heading to the next heading.
    func step(_ n: Int, of r: BitflashBinary.Result) -> [String] {
        let lines = r.lines
        guard let start = lines.firstIndex(where: { $0.hasPrefix("== \(n).") }) else { return [] }
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("== ") } ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test func theDemoTellsTheWholeStoryWithStepsInTheSummary() throws {
        let r = try BitflashBinary.run(["demo"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("== Summary"))
        for step in ["1 new runtime", "2 edit", "3 same file", "4 flaky link", "5 forced full"] {
            #expect(r.lines.contains { $0.hasPrefix(step) }, "\(step)")
        }
        #expect(r.lines.contains { $0.hasPrefix("4 flaky link") && $0.contains("full") && $0.contains("yes") })
        #expect(r.stdout.contains("× faster"))
        #expect(!r.stdout.contains("played at real speed"), "into a pipe the demo does not pace itself")
    }

    @Test func onlyTheStepWhosePartialFlashFailsSaysItFallsBack() throws {
        let r = try BitflashBinary.run(["demo", "--fast"])
        #expect(r.status == 0, "\(r.stderr)")
        let first = try #require(step(1, of: r).first)
        #expect(!first.contains("falls back"), "\(first)")
        #expect(r.lines.contains { $0.hasPrefix("1 new runtime") && $0.contains(" no ") })
        let fourth = try #require(step(4, of: r).first)
        #expect(fourth.contains("falls back") && fourth.contains("fourth drop"), "\(fourth)")
        // The heading's count matches what the step shows: three reconnections, then the decision.
        #expect(step(4, of: r).filter { $0.contains("the link dropped") && $0.contains("connecting again") }.count == 3)
    }

    @Test func eachStepGivesItsReasonOnce() throws {
        let r = try BitflashBinary.run(["demo", "--fast"])
        #expect(r.status == 0, "\(r.stderr)")
        let reasons = [
            1: "differs from the file's runtime", 3: "the board already runs this program (program hash",
            4: "the link dropped 4 times", 5: "a full update was asked for"
        ]
        for (n, reason) in reasons {
            let lines = step(n, of: r)
            #expect(
                lines.filter { $0.contains(reason) }.count == 1, "step \(n): \(lines.filter { $0.contains(reason) })")
            #expect(lines.contains { $0.contains("decision: ") && $0.contains(reason) }, "step \(n)")
        }
        #expect(
            step(4, of: r).contains { $0.hasSuffix("sim-2: full (after fallback), 196,664 bytes, 54.6 s, verified") },
            "\(step(4, of: r).suffix(2))")
    }

    @Test func aFlashThatSucceededCarriesNoAdviceForAFailure() throws {
        let r = try BitflashBinary.run(["demo", "--fast"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("try again"), "\(r.lines.filter { $0.contains("try again") })")
        let json = try BitflashBinary.run(["demo", "--fast", "--json"])
        let fallback = try #require(
            json.lines.first { $0.contains(#""code":"partial-failed""#) && $0.contains(#""type":"decision""#) })
        #expect(fallback.contains("the link dropped 4 times") && !fallback.contains("closer"), "\(fallback)")
        #expect(
            json.lines.contains {
                $0.contains(#""type":"result""#) && $0.contains(#""fallback":true"#) && $0.contains("partial-failed")
            })
    }

    @Test func durationsInMessagesReadAsPeopleSayThem() throws {
        let r = try BitflashBinary.run(["demo", "--fast"])
        #expect(r.status == 0, "\(r.stderr)")
        let resets = r.lines.filter { $0.contains("the device is resetting") }
        #expect(resets.count == 3)
        #expect(resets.allSatisfy { $0.hasSuffix("reconnecting in 1.8 s") }, "\(resets)")
        #expect(!r.stdout.contains(" seconds"), "\(r.lines.filter { $0.contains(" seconds") })")
    }

    @Test func everyBoardIsIntroducedBeforeItAppears() throws {
        let r = try BitflashBinary.run(["demo", "--fast"])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["sim", "sim-2", "sim-3"] {
            let introduced = r.lines.firstIndex { $0.contains(", \(name),") || $0.contains("named \(name),") }
            let used = r.lines.firstIndex { $0.contains("] \(name): ") }
            #expect(
                introduced != nil && used != nil && introduced! < used!,
                "\(name): \(String(describing: introduced)) \(String(describing: used))")
        }
    }
}
