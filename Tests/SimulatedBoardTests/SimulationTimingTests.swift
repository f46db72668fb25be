import Foundation
import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// Modelled time of a well-formed partial flash on the connection-event model.
@Suite struct SimulationTimingTests {
    struct Setup {
        var sim: Simulation
        var board: BoardID
        var newImage: MemoryImage
        var blocks: [ScriptedFlasher.Block]
    }

    /// A V2 board in pairing mode holding one program, and the blocks of another one.
    static func setup(
        _ link: LinkProfile, family: ChipFamily = .nrf52833, magicAt: UInt32 = 0x47000,
        length: Int = 4096 + 256, faults: FaultPlan = .none
    ) throws -> Setup {
        let board: Board = family == .nrf51 ? .calliopeMini2 : .microbitV2
        let old = Fixture.image(family: family, magicAt: magicAt, programLength: length + 2048, seed: 3)
        let new = Fixture.image(
            family: family, magicAt: magicAt, programLength: length, seed: 8,
            programHash: [0xC1, 0, 0x81, 0, 0xAB, 0, 0xDD, 0])
        var sim = Simulation(link: link, faults: faults)
        // Put into pairing mode by the user's gesture: the boot initialises the key-value store.
        var start = try SimulatedBoard(profile: BoardProfile(board: board), image: old)
        start.reset(holdingButtons: true)
        let id = sim.addBoard(start)
        return Setup(
            sim: sim, board: id, newImage: new, blocks: Fixture.blocks(of: new.slice(magicAt..<0x80000), from: magicAt))
    }

    @Test(arguments: [LinkProfile.linuxDefault, .deviceRequested, .fast])
    func everyBlockCostsTwoEventsAndPageOpeningBlocksWaitForTheErase(link: LinkProfile) throws {
        var s = try Self.setup(link)
        try s.sim.updateBoard(s.board) { $0.resetFlashCounters() }
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
        let log = try run.outcome.get()
        let ci = link.connectionInterval
        let plainCost = ci * 2
        // Blocks after the first: the first also stores `flashIncomplete`.
        let openingCost =
            LowerBound.partial(
                blocks: 1, pagesOpened: 1, family: .nrf52833, profile: link, storesFlashIncomplete: false)
            - LowerBound.partial(blocks: 0, pagesOpened: 0, family: .nrf52833, profile: link)
        #expect(log.ackTimes.count == s.blocks.count)
        for i in 1..<log.ackTimes.count {
            let opening = s.blocks[i].address % 4096 == 0
            #expect(log.ackTimes[i] - log.ackTimes[i - 1] == (opening ? openingCost : plainCost), "block \(i)")
        }
        #expect(log.status == [0xEE, 0x01, 0x00])
        #expect(log.disconnect == .remoteTerminated)
        // The board holds the new program and nothing was written outside it.
        let board = try s.sim.board(s.board)
        let end = s.blocks.last.map { $0.address + 64 } ?? 0
        #expect(try board.readFlash(0x47000..<end) == s.newImage.read(0x47000..<end))
        #expect(board.flash.writesStay(inside: 0x47000..<end))
        #expect(board.flash.eraseLog == [0x47000, 0x48000])
        #expect(board.flash.wordWriteCount == (s.blocks.count + 1) * 16)
        #expect(board.mode == .application && !board.flashIncomplete)
    }

    @Test(arguments: [
        LinkProfile.linuxDefault, .fast, LinkProfile(name: "custom-11.25ms", connectionIntervalMicroseconds: 11_250)
    ])
    func wholeFlashIsJustAboveTheLowerBound(link: LinkProfile) throws {
        var s = try Self.setup(link)
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
        _ = try run.outcome.get()
        let opened = s.blocks.filter { $0.address % 4096 == 0 }.count
        let bound = LowerBound.partial(blocks: s.blocks.count, pagesOpened: opened, family: .nrf52833, profile: link)
        let achieved = run.statistics.completionTime
        #expect(achieved >= bound)
        #expect(achieved - bound < link.connectionInterval)
        // CCCD write, STATUS, two REGION_INFO, 4 packets per block, END_OF_TRANSMISSION.
        #expect(run.statistics.centralPackets == 4 + s.blocks.count * 4 + 1)
    }

    /// The example programs of docs/protocols/partial-flashing.md §8: V2 19 840 bytes (310 blocks)
    /// and V1 12 000 bytes (188 blocks). Prints achieved and bound for the benchmark notes.
    @Test(arguments: [LinkProfile.linuxDefault, .deviceRequested, .fast])
    func examplePrograms(link: LinkProfile) throws {
        for (family, magic, length) in [(ChipFamily.nrf52833, UInt32(0x47000), 19_840), (.nrf51, 0x35400, 12_000)] {
            var s = try Self.setup(link, family: family, magicAt: magic, length: length)
            let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(120))
            _ = try run.outcome.get()
            let opened = s.blocks.filter { $0.address % family.pageSize == 0 }.count
            let bound = LowerBound.partial(blocks: s.blocks.count, pagesOpened: opened, family: family, profile: link)
            let achieved = run.statistics.completionTime
            #expect(achieved >= bound)
            let ratio = Double(achieved.wholeMicroseconds) / Double(bound.wholeMicroseconds)
            print(
                "\(family.chipName) \(s.blocks.count) blocks, \(opened) pages, \(link.name): achieved \(achieved.secondsText), "
                    + "bound \(bound.secondsText), ratio \(String(format: "%.4f", ratio)), events \(run.statistics.connectionEvents), "
                    + "up \(run.statistics.centralPackets) packets / \(run.statistics.centralBytes) B, "
                    + "down \(run.statistics.peripheralPackets) packets / \(run.statistics.peripheralBytes) B")
        }
    }

    @Test func nrf51BlocksFollowTheSameRule() throws {
        var s = try Self.setup(.deviceRequested, family: .nrf51, magicAt: 0x35400, length: 2048 + 128)
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
        let log = try run.outcome.get()
        let opening =
            LowerBound.partial(
                blocks: 1, pagesOpened: 1, family: .nrf51, profile: .deviceRequested, storesFlashIncomplete: false)
            - LowerBound.partial(blocks: 0, pagesOpened: 0, family: .nrf51, profile: .deviceRequested)
        for i in 1..<log.ackTimes.count {
            let expected = s.blocks[i].address % 1024 == 0 ? opening : .milliseconds(30)
            #expect(log.ackTimes[i] - log.ackTimes[i - 1] == expected, "block \(i)")
        }
        let board = try s.sim.board(s.board)
        #expect(board.flash.eraseLog == [0x35400, 0x35800, 0x35C00])
    }

    @Test func pipeliningClientHangsTheBoardOverTheLinkAndLeavesItsFlashWrong() throws {
        var s = try Self.setup(.deviceRequested)
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks, pipelined: true), on: s.board, deadline: .seconds(60))
        // A block sent before the last one was written leaves `offset` with only its low 16 bits
        // when the last one is burnt: the SoftDevice refuses that address and the board's flash
        // work hangs, so the answers stop.
        #expect(throws: (any Error).self) { try run.outcome.get() }
        let board = try s.sim.board(s.board)
        #expect(board.flashWorkHangs)
        let end = s.blocks.last.map { $0.address + 64 } ?? 0
        #expect(try board.readFlash(0x47000..<end) != s.newImage.read(0x47000..<end))
    }

    /// A whole 180 KiB program (2880 blocks) runs to the end, and the trace is a record only: a
    /// run without it models the same answers at the same instants. (How fast the simulation runs
    /// is a benchmark's figure, not a test's.)
    @Test func aLargeTransferAnswersEveryBlockTheSameWithOrWithoutATrace() throws {
        var s = try Self.setup(.deviceRequested, magicAt: 0x20000, length: 180 * 1024)
        s.sim.recordsTrace = false
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(600))
        let log = try run.outcome.get()
        #expect(log.ackTimes.count == 2880)
        #expect(run.trace.entries.isEmpty)
        var traced = try Self.setup(.deviceRequested, magicAt: 0x20000, length: 180 * 1024)
        let tracedRun = traced.sim.run(
            ScriptedFlasher(blocks: traced.blocks), on: traced.board, deadline: .seconds(600))
        #expect(try tracedRun.outcome.get().ackTimes == log.ackTimes)
        #expect(tracedRun.statistics.completionTime == run.statistics.completionTime)
        #expect(tracedRun.trace.entries.count >= 2880)
    }
}
