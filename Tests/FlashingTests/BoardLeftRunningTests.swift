import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import PartialFlashing
import SampleFirmware
import SimulatedBoard
@testable import Flashing

/// Every flash ends with the board running the program in application mode, read back; a board
/// that already runs it is not touched. On simulated boards whose key-value page keeps
/// `flashIncomplete` across full updates (docs/protocols/board-storage.md §4, §6).
@Suite struct BoardLeftRunningTests {
    enum Kind: String, CaseIterable { case mcuboot, stock }

    static func board(_ kind: Kind, _ board: Board, running firmware: Firmware) throws -> SimulatedBoard {
        switch kind {
        case .mcuboot: try SessionStoryTests.mcuMgrBoard(board, running: firmware)
        case .stock: try NordicStoryTests.stockBoard(board, running: firmware)
        }
    }

    /// Untouched when this computer finished the program there (`FinishRecord`); any other
    /// board is confirmed by a restart (UpToDateTruthTests.swift).
    @Test(arguments: Kind.allCases)
    func anUpToDateBoardThisComputerFinishedIsLeftUntouched(kind: Kind) throws {
        let firmware = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        var sim = Simulation(link: .deviceRequested)
        var start = try Self.board(kind, .microbitV2, running: firmware)
        start.resetFlashCounters()
        let id = sim.addBoard(start)
        let boots = try sim.board(id).device.bootCount
        var plan = try FlashPlan.make(firmware: firmware, board: .microbitV2)
        let program = try #require(plan.program)
        plan.finished = FinishRecord(board: "sim", programHash: program.programHash.hexString, finishedAt: "earlier")
        let run = SimulatedFlash.run(
            plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        #expect(run.result.path == .upToDate)
        #expect(run.result.verification == .verified)
        let after = try sim.board(id)
        // No FF 00, no FF 01: no boot, no key stored, nothing erased or written.
        #expect(after.device.bootCount == boots)
        #expect(after.device.storage.isEmpty, "\(after.device.storage.keys)")
        #expect(after.flash.eraseCount == 0 && after.flash.wordWriteCount == 0 && after.flash.storageOperations == 0)
        #expect(after.mode == .application)
    }

    /// The issue's story: a partial flash was left unfinished (flashIncomplete in the key-value
    /// page, the board in pairing mode at every boot), and the next file has a new runtime. The full
    /// update leaves the key alone, so the session clears it with one page and END_OF_TRANSMISSION.
    @Test(arguments: Kind.allCases)
    func aFullUpdateOverAnUnfinishedPartialFlashLeavesTheBoardRunningTheProgram(kind: Kind) throws {
        var sim = Simulation(link: .deviceRequested)
        var start = try Self.board(kind, .microbitV2, running: SessionStoryTests.firmware(.nrf52833, .r1, .heart))
        start.markFlashIncomplete()
        start.reset()
        #expect(start.mode == .pairing)
        let id = sim.addBoard(start)
        let file = SessionStoryTests.firmware(.nrf52833, .r2, .counter)
        let plan = try FlashPlan.make(firmware: file, board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        #expect(run.result.path == .full)
        #expect(run.result.verification == .verified, "\(run.result.verificationNote ?? "")")
        let after = try sim.board(id)
        #expect(after.mode == .application)
        #expect(!after.flashIncomplete)
        #expect(!after.device.bootsIntoPairingMode)
        let program = try #require(plan.program)
        #expect(after.memoryMap.first { $0.id == 2 }?.hash == program.programHash)
        // The board boots into its program from now on.
        var rebooted = after
        rebooted.reset()
        #expect(rebooted.mode == .application)
    }
}
