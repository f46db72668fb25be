import NordicDFUFrames
import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import NordicDFU
import SampleFirmware
import SimulatedBoard
@testable import Flashing

/// The story on simulated stock boards, whose only full-update path is their Nordic
/// bootloader: a new runtime goes full by Nordic DFU, an edit goes partial, the same file
/// is up to date; a board left in "DfuTarg" is recovered.
@Suite struct NordicStoryTests {
    static func stockBoard(_ board: Board, running firmware: Firmware) throws -> SimulatedBoard {
        try SimulatedBoard(profile: SimulatedBoard.stockProfile(board), image: firmware.sections[0].image)
    }

    static func run(
        _ firmware: Firmware, on id: BoardID, board: Board, in sim: inout Simulation,
        options: FlashOptions = FlashOptions()
    ) throws -> SimulatedFlashRun {
        SimulatedFlash.run(
            plan: try .make(firmware: firmware, board: board), options: options, on: id, named: "sim", in: &sim)
    }

    static func expectApplication(of board: SimulatedBoard, equals firmware: Firmware) throws {
        let family = board.profile.family
        let app = try DFUApplication.cut(from: firmware.sections[0].image, family: family)
        #expect(try board.readFlash(app.start..<(app.start + UInt32(app.bytes.count))) == app.bytes)
        let program = try #require(MakeCodeProgram.find(in: firmware.sections[0].image, family: family))
        // The memory map the runtime scans at each REGION_INFO shows the new runtime and program.
        #expect(board.memoryMap.count == 3)
        #expect(board.memoryMap[1].hash == program.runtimeHash)
        #expect(board.memoryMap[2].hash == program.programHash)
        #expect(board.memoryMap[2].start == program.region.lowerBound)
    }

    @Test("Stock boards: new runtime by Nordic DFU, edit partial, same file up to date", arguments: Board.allCases)
    func story(board: Board) throws {
        let family = board.family
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Self.stockBoard(board, running: SessionStoryTests.firmware(family, .r1, .heart)))

        let newRuntime = SessionStoryTests.firmware(family, .r2, .heart)
        let first = try Self.run(newRuntime, on: id, board: board, in: &sim)
        #expect(first.result.error == nil, "\(first.result.error ?? "")")
        #expect(first.result.path == .full)
        #expect(first.result.reason.code == "runtime-differs")
        #expect(first.result.reason.message.contains("Nordic \(family == .nrf51 ? "legacy" : "Secure") DFU"))
        #expect(first.result.verified)
        let afterFull = try sim.board(id)
        #expect(!afterFull.inNordicBootloader)
        #expect(afterFull.nordicSettings.applicationValid)
        try Self.expectApplication(of: afterFull, equals: newRuntime)

        let edit = SessionStoryTests.firmware(family, .r2, .counter)
        let second = try Self.run(edit, on: id, board: board, in: &sim)
        #expect(second.result.error == nil, "\(second.result.error ?? "")")
        #expect(second.result.path == .partial)
        try Self.expectApplication(of: sim.board(id), equals: edit)

        let third = try Self.run(edit, on: id, board: board, in: &sim)
        #expect(third.result.path == .upToDate)
        #expect(third.result.bytesSent == 0)
    }

    @Test(
        "A board left in DfuTarg is recovered with a Nordic DFU of the given file",
        arguments: [Board.microbitV2, .microbitV1])
    func recoversABoardInTheBootloader(board: Board) throws {
        let family = board.family
        var stuck = try Self.stockBoard(board, running: SessionStoryTests.firmware(family, .r1, .heart))
        try stuck.strandInBootloader()
        #expect(stuck.connectionInfo(centralMTU: 247).name == "DfuTarg")
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(stuck)
        let firmware = SessionStoryTests.firmware(family, .r1, .counter)
        let run = try Self.run(firmware, on: id, board: board, in: &sim)
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        #expect(run.result.path == .full)
        #expect(run.result.reason.code == "in-bootloader")
        try Self.expectApplication(of: sim.board(id), equals: firmware)
        #expect(try !sim.board(id).inNordicBootloader)
    }

    @Test("--mode full uses the Nordic bootloader; --full-path mcumgr on a stock board says what it lacks")
    func forcedPaths() throws {
        var sim = Simulation(link: .deviceRequested)
        let firmware = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let id = sim.addBoard(try Self.stockBoard(.microbitV2, running: firmware))
        let full = try Self.run(firmware, on: id, board: .microbitV2, in: &sim, options: FlashOptions(mode: .full))
        #expect(full.result.path == .full)
        #expect(full.result.error == nil, "\(full.result.error ?? "")")
        // The library names the option in its own words; the command line names its flag.
        #expect(full.result.reason.code == "forced" && full.result.reason.message.contains("(mode full)"))
        #expect(!full.result.reason.message.contains("--"), "\(full.result.reason.message)")
        var forced = FlashOptions(mode: .full)
        forced.fullPath = .mcumgr
        let refused = try Self.run(firmware, on: id, board: .microbitV2, in: &sim, options: forced)
        #expect(refused.result.path == nil)
        #expect(refused.result.error?.contains("McuMgr") == true)
        #expect(refused.result.error?.contains("--") == false, "\(refused.result.error ?? "")")
        forced.optionNames = OptionNames(mode: "--mode ", fullPath: "--full-path ", fullImage: "--dfu-image FILE")
        let worded = try Self.run(firmware, on: id, board: .microbitV2, in: &sim, options: forced)
        #expect(
            worded.result.error?.contains("--full-path mcumgr was asked for") == true, "\(worded.result.error ?? "")")
    }

    @Test("An MCUboot board keeps McuMgr; --full-path nordic on it is refused with the reason")
    func mcuBootBoardsStayMcuMgr() throws {
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(
            try SessionStoryTests.mcuMgrBoard(.microbitV2, running: SessionStoryTests.firmware(.nrf52833, .r1, .heart)))
        var options = SessionStoryTests.options()
        options.fullPath = .nordic
        let run = try Self.run(
            SessionStoryTests.firmware(.nrf52833, .r2, .heart), on: id, board: .microbitV2, in: &sim, options: options)
        #expect(run.result.error?.contains("full-update path nordic was asked for") == true)
        let auto = try Self.run(
            SessionStoryTests.firmware(.nrf52833, .r2, .heart), on: id, board: .microbitV2, in: &sim,
            options: SessionStoryTests.options())
        #expect(auto.result.path == .full)
        #expect(try auto.outcome.get().fullPath == .mcumgr)
    }
}
