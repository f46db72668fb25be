import FirmwareImage
import LinkModel
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
import TestSupport
@testable import Flashing

/// A full update with an application smaller than the runtime before it leaves the old MakeCode
/// program in the pages above it, and the runtime's scan still finds it (DAL and CODAL
/// `MicroBitMemoryMap::findHashes`): the next file with the old runtime must not be written as a
/// partial flash over a runtime area that holds the other application.
@Suite struct ProgramLeftBehindTests {
    /// An application without a MakeCode program, 64 KiB from the application start: the sample
    /// runtime's first 64 KiB (its vector table included), with the board's SoftDevice stand-in.
    static func smallApplication(_ family: ChipFamily) -> Firmware {
        let layout = family.layout
        let whole = SampleFirmware.image(family: family, runtime: .r2, program: .heart)
        var image = whole.slice(0..<(layout.applicationStart + 0x10000))
        for extra in [layout.bootloaderStart..<layout.flashSize, layout.uicr] {
            for segment in whole.slice(extra).segments { try! image.write(segment.bytes, at: segment.start) }
        }
        return Firmware(
            fileName: "small.hex", format: .intelHex, sections: [.init(family: family, image: image, warnings: [])])
    }

    @Test(arguments: [Board.microbitV1, .microbitV2])
    func aProgramLeftAboveASmallerApplicationIsNotTakenForTheBoards(board: Board) throws {
        let family = board.family
        var sim = Simulation(link: .deviceRequested)
        let old = SessionStoryTests.firmware(family, .r1, .heart)
        let id = sim.addBoard(try NordicStoryTests.stockBoard(board, running: old))
        let first = SimulatedFlash.run(
            plan: try .make(firmware: Self.smallApplication(family), board: board),
            options: SessionStoryTests.options(),
            on: id, named: "sim", in: &sim)
        #expect(first.result.error == nil, "\(first.result.error ?? "")")
        #expect(first.result.path == .full)

        let file = SessionStoryTests.firmware(family, .r1, .counter)
        let plan = try FlashPlan.make(firmware: file, board: board)
        let run = SimulatedFlash.run(plan: plan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        #expect(run.result.error == nil, "\(run.result.error ?? "")")
        #expect(run.result.path == .full, "\(run.result.reason.message)")
        #expect(run.result.reason.code == "program-left-behind", "\(run.result.reason.message)")
        #expect(run.result.verification == .verified, "\(run.result.verificationNote ?? "")")
        try SessionStoryTests.expectApplicationRegion(of: try sim.board(id), equals: plan.image, family: family)
    }
}
