import NordicDFUFrames
import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import SampleFirmware
import NordicDFU
import SimulatedBoard
@testable import Flashing

/// Auto takes the path with the lowest estimate, from the link measured on the connection;
/// `--prefer` and `--mode` override it; a dry run decides and writes nothing.
@Suite struct PathDecisionTests {
    typealias Story = SessionStoryTests

    /// Flashes `program` (runtime r1) onto a fresh McuMgr board that runs r1 + heart, over `link`.
    static func flash(
        _ board: Board, _ program: SampleFirmware.ProgramID, link: LinkProfile,
        options: FlashOptions = Story.options()
    ) throws -> (run: SimulatedFlashRun, before: SimulatedBoard, after: SimulatedBoard) {
        var sim = Simulation(link: link)
        let id = sim.addBoard(try Story.mcuMgrBoard(board, running: Story.firmware(board.family, .r1, .heart)))
        let before = try sim.board(id)
        let plan = try FlashPlan.make(firmware: Story.firmware(board.family, .r1, program), board: board)
        let run = SimulatedFlash.run(plan: plan, options: options, on: id, named: "sim", in: &sim)
        return (run, before, try sim.board(id))
    }

    static func outcome(_ run: SimulatedFlashRun) throws -> SessionOutcome {
        try run.outcome.get()
    }

    @Test func aSmallProgramGoesPartialWithBothEstimatesAndTheMargin() throws {
        let (run, _, _) = try Self.flash(.microbitV2, .counter, link: .deviceRequested)
        let o = try Self.outcome(run)
        #expect(o.path == .partial)
        let d = try #require(o.decision)
        #expect(d.chosen == .partial)
        #expect(d.basis == .fastest)
        #expect(Set(d.estimates.map(\.path)) == [.partial, .mcumgr])
        let partial = try #require(d.estimates.first { $0.path == .partial })
        let full = try #require(d.estimates.first { $0.path == .mcumgr })
        #expect(try #require(d.marginSeconds) == full.seconds - partial.seconds)
        #expect(full.seconds > 2 * partial.seconds, "\(full.seconds) vs \(partial.seconds)")
        #expect(run.result.decision == d)
    }

    @Test(arguments: [LinkProfile.fast, .deviceRequested, .linuxDefault])
    func aHugeProgramOnAMcuMgrBoardGoesFullAndThatIsFaster(link: LinkProfile) throws {
        let (auto, _, after) = try Self.flash(.microbitV2, .huge, link: link)
        let o = try Self.outcome(auto)
        #expect(o.path == .full)
        #expect(o.reason.code == "full-is-faster")
        #expect(o.fallback == false && o.partial == nil)
        #expect(auto.result.verified)
        let d = try #require(o.decision)
        #expect(d.chosen == .mcumgr && d.basis == .fastest)
        #expect(d.estimates.contains { $0.path == .partial })
        try Story.expectApplicationRegion(
            of: after, equals: Story.firmware(.nrf52833, .r1, .huge).sections[0].image, family: .nrf52833)
        // The path not taken, forced, takes longer on the same board and link.
        let (partial, _, _) = try Self.flash(.microbitV2, .huge, link: link, options: Story.options(.partial))
        #expect(try Self.outcome(partial).path == .partial)
        #expect(
            auto.statistics.completionTime < partial.statistics.completionTime,
            "auto \(auto.statistics.completionTime) vs partial \(partial.statistics.completionTime)")
    }

    @Test func aLargeProgramOnAFastLinkStaysPartialWhereThatIsFaster() throws {
        let (run, _, _) = try Self.flash(.microbitV2, .large, link: .fast)
        #expect(try Self.outcome(run).path == .partial)
    }

    @Test func aStockBoardWithoutMcuMgrTakesPartialAsItsOnlyPath() throws {
        var sim = Simulation(link: .linuxDefault)
        let running = Story.firmware(.nrf52833, .r1, .heart).sections[0].image
        let id = sim.addBoard(try SimulatedBoard(.microbitV2, image: running, mode: .pairing))
        let plan = try FlashPlan.make(firmware: Story.firmware(.nrf52833, .r1, .huge), board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: Story.options(), on: id, named: "sim", in: &sim)
        let o = try Self.outcome(run)
        #expect(o.path == .partial)
        let d = try #require(o.decision)
        #expect(d.basis == .onlyPath && d.estimates.map(\.path) == [.partial] && d.marginSeconds == nil)
    }

    /// Flashes `program` (runtime r1) onto a stock board (partial flashing and its Nordic
    /// bootloader, no SMP) that runs r1 + heart, over `link`.
    static func flashStock(
        _ board: Board, _ program: SampleFirmware.ProgramID, link: LinkProfile,
        options: FlashOptions = Story.options()
    ) throws -> (run: SimulatedFlashRun, after: SimulatedBoard) {
        var sim = Simulation(link: link)
        let id = sim.addBoard(
            try NordicStoryTests.stockBoard(board, running: Story.firmware(board.family, .r1, .heart)))
        let run = try NordicStoryTests.run(
            Story.firmware(board.family, .r1, program), on: id, board: board, in: &sim, options: options)
        return (run, try sim.board(id))
    }

    @Test(
        "A stock board with Nordic DFU: a small program goes partial, by estimate against Nordic DFU",
        arguments: [Board.microbitV2, .microbitV1, .calliopeMini3])
    func aStockBoardWeighsPartialAgainstNordicDFU(board: Board) throws {
        let (run, _) = try Self.flashStock(board, .counter, link: .deviceRequested)
        let o = try Self.outcome(run)
        #expect(o.path == .partial)
        let d = try #require(o.decision)
        #expect(d.chosen == .partial && d.basis == .fastest)
        #expect(Set(d.estimates.map(\.path)) == [.partial, .nordicDFU])
        let partial = try #require(d.estimates.first { $0.path == .partial })
        let nordic = try #require(d.estimates.first { $0.path == .nordicDFU })
        #expect(partial.seconds < nordic.seconds)
        #expect(try #require(d.marginSeconds) == nordic.seconds - partial.seconds)
        #expect(d.summary.hasPrefix("partial (estimated") && d.summary.contains("against nordic-dfu"), "\(d.summary)")
        // The Nordic estimate is made of the flow's steps, for the protocol the board speaks.
        let entry = try #require(nordic.parts.first { $0.name.hasPrefix("enter the bootloader") })
        #expect(entry.name.contains(board.family == .nrf51 ? "DFU control" : "buttonless"))
        // The data: legacy DFU's packets and receipts, Secure DFU's objects paced by the flash queue.
        #expect(
            nordic.parts.contains {
                $0.name.hasPrefix(board.family == .nrf51 ? "packets and receipt round trips" : "packets of each object")
            })
        #expect(
            nordic.counts["bytes"]
                == (try DFUApplication.cut(
                    from: Story.firmware(board.family, .r1, .counter).sections[0].image,
                    family: board.family)).bytes.count)
    }

    @Test(arguments: [LinkProfile.linuxDefault, .deviceRequested])
    func aHugeProgramOnAStockBoardGoesByNordicDFUAndThatIsFaster(link: LinkProfile) throws {
        let (auto, after) = try Self.flashStock(.microbitV2, .huge, link: link)
        let o = try Self.outcome(auto)
        #expect(o.path == .full && o.reason.code == "full-is-faster")
        #expect(o.decision?.chosen == .nordicDFU && o.decision?.basis == .fastest)
        #expect(auto.result.verified)
        try NordicStoryTests.expectApplication(of: after, equals: Story.firmware(.nrf52833, .r1, .huge))
        // The estimate follows the run, and partial flashing, forced, takes longer.
        let estimate = try #require(o.decision?.chosenEstimate?.seconds)
        #expect(abs(estimate - auto.statistics.completionTime.seconds) <= 0.1 * auto.statistics.completionTime.seconds)
        let (partial, _) = try Self.flashStock(.microbitV2, .huge, link: link, options: Story.options(.partial))
        #expect(try Self.outcome(partial).path == .partial)
        #expect(
            auto.statistics.completionTime < partial.statistics.completionTime,
            "auto \(auto.statistics.completionTime) vs partial \(partial.statistics.completionTime)")
    }

    @Test func fullPathMcuMgrLeavesNoNordicEstimateAndPreferFullTakesNordic() throws {
        var preferFull = Story.options()
        preferFull.prefer = .full
        let full = try Self.outcome(Self.flashStock(.microbitV2, .counter, link: .fast, options: preferFull).run)
        #expect(full.path == .full && full.decision?.chosen == .nordicDFU && full.decision?.basis == .preferred)
        #expect((full.decision?.marginSeconds ?? 0) < 0, "the preferred path is the slower one")

        var noNordic = Story.options()
        noNordic.fullPath = .mcumgr
        let partial = try Self.outcome(Self.flashStock(.microbitV2, .counter, link: .fast, options: noNordic).run)
        #expect(partial.path == .partial)
        #expect(partial.decision?.estimates.map(\.path) == [.partial] && partial.decision?.basis == .onlyPath)
    }

    @Test func preferAndModeOverrideTheEstimate() throws {
        var preferPartial = Story.options()
        preferPartial.prefer = .partial
        let slow = try Self.outcome(Self.flash(.microbitV2, .huge, link: .fast, options: preferPartial).run)
        #expect(slow.path == .partial)
        #expect(slow.decision?.basis == .preferred)
        #expect((slow.decision?.marginSeconds ?? 0) < 0, "the preferred path is the slower one")

        var preferFull = Story.options()
        preferFull.prefer = .full
        let full = try Self.outcome(Self.flash(.microbitV2, .counter, link: .fast, options: preferFull).run)
        #expect(full.path == .full)
        #expect(full.decision?.basis == .preferred && full.decision?.chosen == .mcumgr)

        let forced = try Self.outcome(Self.flash(.microbitV2, .huge, link: .fast, options: Story.options(.partial)).run)
        #expect(forced.path == .partial && forced.decision?.basis == .forced)
    }

    @Test(arguments: [LinkProfile.fast, .deviceRequested, .linuxDefault, try! LinkProfile(named: "11.25ms")])
    func theIntervalIsMeasuredFromTheMemoryMapRoundTrips(link: LinkProfile) throws {
        let (run, _, _) = try Self.flash(.microbitV1, .counter, link: link)
        let d = try #require(try Self.outcome(run).decision)
        #expect(d.link.source == .measured)
        #expect(d.link.profile.connectionIntervalMicroseconds == link.connectionIntervalMicroseconds)
        #expect(d.link.profile.attMTU == 247)
    }

    @Test(arguments: [(SampleFirmware.ProgramID.counter, FlashPath.partial), (.huge, .full)])
    func aDryRunDecidesAndWritesNothing(program: SampleFirmware.ProgramID, path: FlashPath) throws {
        var options = Story.options()
        options.dryRun = true
        let (run, before, after) = try Self.flash(.microbitV2, program, link: .fast, options: options)
        let o = try Self.outcome(run)
        #expect(o.dryRun && o.path == path && o.bytesSent == 0 && !o.verified)
        #expect(run.result.bytesSent == 0)
        #expect(after.flash == before.flash, "the board's flash changed in a dry run")
        #expect(after.flash.eraseCount == 0 && after.flash.wordWriteCount == 0)
        #expect(after.smpServer?.secondary == before.smpServer?.secondary)
        #expect(after.smpServer?.statistics.secondaryPageErases == 0 && after.smpServer?.statistics.frames == 0)
        let program = try #require(
            MakeCodeProgram.find(in: Story.firmware(.nrf52833, .r1, program).sections[0].image, family: .nrf52833))
        #expect(o.region == program.region)
        let d = try #require(o.decision)
        #expect(d.byProfile.map(\.profile) == LinkProfile.named.map(\.name))
        #expect(d.byProfile.allSatisfy { $0.estimates.count == 2 })
    }

    @Test func aDryRunOfANewRuntimeReportsTheFullPathOnly() throws {
        var options = Story.options()
        options.dryRun = true
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Story.mcuMgrBoard(.microbitV2, running: Story.firmware(.nrf52833, .r1, .heart)))
        let before = try sim.board(id)
        let plan = try FlashPlan.make(firmware: Story.firmware(.nrf52833, .r2, .heart), board: .microbitV2)
        let o = try SimulatedFlash.run(plan: plan, options: options, on: id, named: "sim", in: &sim).outcome.get()
        #expect(o.dryRun && o.path == .full && o.reason.code == "runtime-differs")
        #expect(o.decision?.estimates.map(\.path) == [.mcumgr])
        #expect(try sim.board(id).flash == before.flash)
    }
}
