import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedBoard
@testable import Flashing

/// The whole story on simulated boards: a new runtime goes full, an edit goes partial,
/// the same file again is up to date; the flash is byte-exact at every step.
@Suite struct SessionStoryTests {
    static func firmware(_ family: ChipFamily, _ runtime: SampleFirmware.RuntimeID, _ program: SampleFirmware.ProgramID)
        -> Firmware
    {
        let image = SampleFirmware.image(family: family, runtime: runtime, program: program)
        return Firmware(
            fileName: "\(runtime)-\(program).hex", format: .intelHex,
            sections: [.init(family: family, image: image, warnings: [])])
    }

    /// A board with the McuMgr profile, running `firmware`'s application.
    static func mcuMgrBoard(_ board: Board, running firmware: Firmware) throws -> SimulatedBoard {
        let plan = try FlashPlan.make(firmware: firmware, board: board)
        let app = try #require(plan.fullImage)
        return try SimulatedBoard.mcuMgrBoard(board, primary: app.bytes)
    }

    static func options(_ mode: FlashMode = .auto) -> FlashOptions {
        var o = FlashOptions(mode: mode)
        o.mcumgr.estimatedSwapTime = .seconds(2)
        return o
    }

    static func expectApplicationRegion(of board: SimulatedBoard, equals image: MemoryImage, family: ChipFamily) throws
    {
        let layout = family.layout
        let end = try #require(image.slice(layout.applicationStart..<layout.scratchPage).span?.upperBound)
        #expect(try board.readFlash(layout.applicationStart..<end) == image.read(layout.applicationStart..<end))
    }

    @Test(arguments: [Board.microbitV2, .microbitV1])
    func newRuntimeGoesFullThenEditGoesPartialThenUpToDate(board: Board) throws {
        let family = board.family
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Self.mcuMgrBoard(board, running: Self.firmware(family, .r1, .heart)))

        // 1. A new runtime: partial flashing is impossible, the full update follows.
        let newRuntime = Self.firmware(family, .r2, .heart)
        let first = SimulatedFlash.run(
            plan: try .make(firmware: newRuntime, board: board), options: Self.options(),
            on: id, named: "sim", in: &sim)
        #expect(first.result.error == nil, "\(first.result.error ?? "")")
        #expect(first.result.path == .full)
        #expect(first.result.reason.code == "runtime-differs")
        #expect(first.result.verified)
        try Self.expectApplicationRegion(of: sim.board(id), equals: newRuntime.sections[0].image, family: family)

        // 2. An edit of the program: partial.
        let edit = Self.firmware(family, .r2, .counter)
        let second = SimulatedFlash.run(
            plan: try .make(firmware: edit, board: board), options: Self.options(),
            on: id, named: "sim", in: &sim)
        #expect(second.result.error == nil, "\(second.result.error ?? "")")
        #expect(second.result.path == .partial)
        #expect(second.result.verified)
        let program = try #require(MakeCodeProgram.find(in: edit.sections[0].image, family: family))
        #expect(try sim.board(id).readFlash(program.region) == edit.sections[0].image.read(program.region))

        // 3. The same file again: up to date, nothing written.
        let third = SimulatedFlash.run(
            plan: try .make(firmware: edit, board: board), options: Self.options(),
            on: id, named: "sim", in: &sim)
        #expect(third.result.path == .upToDate)
        #expect(third.result.bytesSent == 0)
        #expect(!third.trace.entries.contains { $0.text.contains("→ 01 ") })
    }

    @Test func partialIsMuchFasterThanFullForAnEdit() throws {
        var sim = Simulation(link: .deviceRequested)
        let start = Self.firmware(.nrf52833, .r1, .heart)
        let a = sim.addBoard(try Self.mcuMgrBoard(.microbitV2, running: start))
        let b = sim.addBoard(try Self.mcuMgrBoard(.microbitV2, running: start))
        let plan = try FlashPlan.make(firmware: Self.firmware(.nrf52833, .r1, .counter), board: .microbitV2)
        let partial = SimulatedFlash.run(plan: plan, options: Self.options(), on: a, named: "a", in: &sim)
        let full = SimulatedFlash.run(plan: plan, options: Self.options(.full), on: b, named: "b", in: &sim)
        #expect(partial.result.path == .partial)
        #expect(full.result.path == .full)
        #expect(full.result.reason.code == "forced")
        #expect(partial.result.seconds * 2 < full.result.seconds)
        try Self.expectApplicationRegion(of: sim.board(b), equals: plan.image, family: .nrf52833)
    }

    @Test func partialOnlyModeRefusesANewRuntimeAndWritesNothing() throws {
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Self.mcuMgrBoard(.microbitV2, running: Self.firmware(.nrf52833, .r1, .heart)))
        let before = try sim.board(id).flash.image
        let run = SimulatedFlash.run(
            plan: try .make(firmware: Self.firmware(.nrf52833, .r2, .heart), board: .microbitV2),
            options: Self.options(.partial), on: id, named: "sim", in: &sim)
        #expect(run.result.error?.contains("runtime") == true)
        #expect(try sim.board(id).flash.image == before)
    }

    @Test func boardWithoutMcuMgrExplainsThatItNeedsAFullUpdate() throws {
        var sim = Simulation(link: .deviceRequested)
        let board = try SimulatedBoard(
            .microbitV2, image: SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart),
            mode: .pairing)
        let id = sim.addBoard(board)
        let run = SimulatedFlash.run(
            plan: try .make(firmware: Self.firmware(.nrf52833, .r2, .heart), board: .microbitV2),
            options: Self.options(), on: id, named: "sim", in: &sim)
        let error = try #require(run.result.error)
        #expect(error.contains("runtime"))
        #expect(error.contains("McuMgr"))
    }
}

/// Sequences that change what the bootloader and the memory map see.
@Suite struct SessionSequenceTests {
    @Test func fullUpdateWorksAfterAPartialFlashGrewTheProgramOverTheSlotTrailer() throws {
        var sim = Simulation(link: .fast)
        let id = sim.addBoard(
            try SessionStoryTests.mcuMgrBoard(.microbitV2, running: SessionStoryTests.firmware(.nrf52833, .r1, .heart)))
        let grow = SimulatedFlash.run(
            plan: try .make(firmware: SessionStoryTests.firmware(.nrf52833, .r1, .large), board: .microbitV2),
            options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(grow.result.path == .partial)
        let target = SessionStoryTests.firmware(.nrf52833, .r2, .heart)
        let full = SimulatedFlash.run(
            plan: try .make(firmware: target, board: .microbitV2),
            options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(full.result.error == nil, "\(full.result.error ?? "")")
        #expect(full.result.path == .full)
        try SessionStoryTests.expectApplicationRegion(
            of: sim.board(id), equals: target.sections[0].image, family: .nrf52833)
    }
}

/// The McuMgr story on real MakeCode files, with the flash checked byte for byte at each step.
@Suite(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
struct CorpusSessionStoryTests {
    static func firmware(_ name: String) throws -> Firmware {
        try Firmware.parse(Corpus.bytes("real/\(name)"), fileName: name)
    }

    @Test(arguments: [Board.microbitV2, .microbitV1])
    func realFilesGoFullThenPartialThenUpToDate(board: Board) throws {
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(
            try SessionStoryTests.mcuMgrBoard(
                board, running: Self.firmware("makecode-universal-3.0.68-small-heart.hex")))
        let steps: [(String, FlashPath)] = [
            ("makecode-universal-8.0.18-small-heart.hex", .full),
            ("makecode-universal-8.0.11-beating-heart.hex", .partial),
            ("makecode-universal-8.0.11-beating-heart.hex", .upToDate)
        ]
        for (name, expected) in steps {
            let firmware = try Self.firmware(name)
            let plan = try FlashPlan.make(firmware: firmware, board: board)
            let run = SimulatedFlash.run(
                plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
            #expect(run.result.error == nil, "\(name): \(run.result.error ?? "")")
            #expect(run.result.path == expected, "\(name)")
            #expect(run.result.verified, "\(name)")
            try SessionStoryTests.expectApplicationRegion(of: sim.board(id), equals: plan.image, family: board.family)
        }
    }

    @Test func aBoardWithOnlyMcuMgrIsUpdatedFull() throws {
        var sim = Simulation(link: .deviceRequested)
        let start = try FlashPlan.make(
            firmware: Self.firmware("makecode-universal-8.0.18-small-heart.hex"), board: .microbitV2)
        let app = try #require(start.fullImage)
        var board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes)
        board = try SimulatedBoard(
            profile: BoardProfile(
                board: .microbitV2, services: [.smp], bluetoothInApplicationMode: true,
                attMTU: 247, dataLength: 251), image: board.flash.image)
        let id = sim.addBoard(board)
        let plan = try FlashPlan.make(
            firmware: Self.firmware("makecode-universal-8.0.11-beating-heart.hex"), board: .microbitV2)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        #expect(run.result.path == .full)
        #expect(run.result.reason.code == "no-partial-service")
        try SessionStoryTests.expectApplicationRegion(of: sim.board(id), equals: plan.image, family: .nrf52833)
    }
}
