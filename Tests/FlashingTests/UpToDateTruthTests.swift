import FirmwareImage
import Foundation
import LinkModel
import PartialFlashing
import PartialFlashingFrames
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
import TestSupport
import Transport
@testable import Flashing

/// "Up to date" only when it is true: a board in application mode that reports the file's
/// program is taken at its word only when this computer finished that program on it
/// (`FinishRecord`); any other is restarted into its program (`FF 01`) and read back, and one
/// that comes back in pairing mode holds an unfinished flash, which is repaired.
@Suite struct UpToDateTruthTests {
    static let old = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
    static let file = SessionStoryTests.firmware(.nrf52833, .r1, .counter)

    /// Another client partial-flashes `firmware`'s program in application mode: REGION_INFO,
    /// the header block (with the program hash) and one more, then it disconnects without
    /// END_OF_TRANSMISSION. The board keeps running, now reporting the new program's hash.
    static func anotherClientStops(on board: SimulatedBoard, writing firmware: Firmware, blocks: Int = 2) throws
        -> SimulatedBoard
    {
        let plan = try FlashPlan.make(firmware: firmware, board: .microbitV2)
        let program = try #require(plan.program)
        var host = GATTBoardHost(board: board)
        var pending: [GATTBoardHost.Work] = []
        func absorb(_ step: GATTBoardHost.Step) { pending += step.work }
        absorb(host.write([0x00, 0x02], to: PartialFlashingGATT.characteristic, kind: .command))
        for k in 0..<blocks {
            let address = program.magicAddress + UInt32(64 * k)
            let data = plan.image.read(address..<(address + 64), fill: 0xFF)
            for i in 0..<4 {
                let field: UInt16 = i == 0 ? UInt16(address & 0xFFFF) : i == 1 ? UInt16(address >> 16) : 0
                let packet = PartialFlashingRequest.flashData(
                    offsetField: field, packetNumber: UInt8(4 * k + i), data: Array(data[(16 * i)..<(16 * i + 16)]))
                absorb(host.write(packet.bytes, to: PartialFlashingGATT.characteristic, kind: .command))
            }
            // Each block's answer before the next block, as a careful client waits for it.
            while !pending.isEmpty { absorb(host.perform(pending.removeFirst())) }
        }
        host.linkDropped()
        return host.board
    }

    func programRegion(_ board: SimulatedBoard, of firmware: Firmware) throws -> Bool {
        let plan = try FlashPlan.make(firmware: firmware, board: .microbitV2)
        let program = try #require(plan.program)
        return try board.readFlash(program.region) == plan.image.read(program.region, fill: 0xFF)
    }

    @Test func anUnfinishedFlashByAnotherClientIsNotUpToDateButRepaired() throws {
        let start = try Self.anotherClientStops(
            on: try NordicStoryTests.stockBoard(.microbitV2, running: Self.old), writing: Self.file)
        let plan = try FlashPlan.make(firmware: Self.file, board: .microbitV2)
        let program = try #require(plan.program)
        // The trap: application mode, the new program's hash, most of its bytes wrong.
        #expect(start.mode == .application && start.flashIncomplete)
        #expect(start.memoryMap.first { $0.id == 2 }?.hash == program.programHash)
        #expect(try !programRegion(start, of: Self.file))

        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(start)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .partial, "\(outcome.reason.message)")
        #expect(outcome.reason.code == "flash-incomplete")
        #expect(outcome.verified)
        let after = try sim.board(id)
        #expect(try programRegion(after, of: Self.file))
        #expect(after.mode == .application && !after.flashIncomplete)
        // The session vouches for the program now: its record names it.
        #expect(outcome.finishRecord(board: "sim", at: "t")?.programHash == program.programHash.hexString)
    }

    @Test func aBoardNothingVouchesForIsConfirmedByARestartAndSaysWhatItCost() throws {
        var start = try NordicStoryTests.stockBoard(.microbitV2, running: Self.file)
        start.resetFlashCounters()
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(start)
        let boots = try sim.board(id).device.bootCount
        let plan = try FlashPlan.make(firmware: Self.file, board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .upToDate && outcome.verified)
        guard case let .restarted(cost)? = outcome.confirmation else {
            Issue.record("not confirmed by a restart: \(String(describing: outcome.confirmation))")
            return
        }
        #expect(cost > .zero)
        #expect(outcome.reason.message.contains("confirmed by a restart"))
        let after = try sim.board(id)
        #expect(after.device.bootCount == boots + 1)
        #expect(after.flash.eraseCount == 0 && after.flash.wordWriteCount == 0)
        #expect(after.mode == .application)
    }

    @Test func aBoardThisComputerFinishedIsLeftUntouched() throws {
        var start = try NordicStoryTests.stockBoard(.microbitV2, running: Self.file)
        start.resetFlashCounters()
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(start)
        let boots = try sim.board(id).device.bootCount
        var plan = try FlashPlan.make(firmware: Self.file, board: .microbitV2)
        let program = try #require(plan.program)
        plan.finished = FinishRecord(
            board: "sim", programHash: program.programHash.hexString, finishedAt: "2026-11-28T15:00:00Z")
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .upToDate && outcome.verified)
        #expect(outcome.confirmation == .finishedHere(at: "2026-11-28T15:00:00Z"))
        #expect(outcome.reason.message.contains("untouched"))
        let after = try sim.board(id)
        #expect(after.device.bootCount == boots)
        #expect(after.flash.storageOperations == 0)
    }

    @Test func aRecordOfAnotherProgramVouchesForNothing() throws {
        let start = try NordicStoryTests.stockBoard(.microbitV2, running: Self.file)
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(start)
        let boots = try sim.board(id).device.bootCount
        var plan = try FlashPlan.make(firmware: Self.file, board: .microbitV2)
        let other = try #require(try FlashPlan.make(firmware: Self.old, board: .microbitV2).program)
        plan.finished = FinishRecord(board: "sim", programHash: other.programHash.hexString, finishedAt: "earlier")
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .upToDate)
        #expect(try sim.board(id).device.bootCount == boots + 1)
    }

    @Test func finishRecordsAreKeptBesideTheResumeRecords() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "finish-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store: any ResumeRecordStore = FileResumeStore(directory: dir)
        #expect(try store.loadFinish(board: "F0:0D:00:00:00:01") == nil)
        let record = FinishRecord(board: "F0:0D:00:00:00:01", programHash: "0011223344556677", finishedAt: "now")
        try store.saveFinish(record, board: "F0:0D:00:00:00:01")
        #expect(try store.loadFinish(board: "F0:0D:00:00:00:01") == record)
        // A resume record of the same board is another file.
        #expect(try store.load(board: "F0:0D:00:00:00:01") == nil)
        try store.forgetFinish(board: "F0:0D:00:00:00:01")
        #expect(try store.loadFinish(board: "F0:0D:00:00:00:01") == nil)
    }
}
