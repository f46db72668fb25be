import FirmwareImage
import Flashing
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Testing

/// `SimulatedFlash`: the library's session run on simulated boards, on virtual time, under the
/// same policy as a real board's flash, with its reports named after the board and stamped with
/// modelled time.
@Suite struct SimulatedFlashTests {
    static func firmware(_ family: ChipFamily, _ runtime: SampleFirmware.RuntimeID, _ program: SampleFirmware.ProgramID)
        -> Firmware
    {
        Firmware(
            fileName: "\(runtime)-\(program).hex", format: .intelHex,
            sections: [
                .init(
                    family: family, image: SampleFirmware.image(family: family, runtime: runtime, program: program),
                    warnings: [])
            ])
    }

    /// A micro:bit V2 with McuMgr running `firmware`'s application.
    static func board(running firmware: Firmware) throws -> SimulatedBoard {
        let app = try #require(try FlashPlan.make(firmware: firmware, board: .microbitV2).fullImage)
        return try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes)
    }

    static func options() -> FlashOptions {
        var o = FlashOptions(mode: .auto)
        o.mcumgr.estimatedSwapTime = .seconds(2)
        return o
    }

    @Test func aFileWithNoImageForTheBoardsChipIsRefusedBeforeAnythingIsSent() throws {
        var sim = Simulation()
        let id = sim.addBoard(try Self.board(running: Self.firmware(.nrf52833, .r1, .heart)))
        let before = try sim.board(id).readFlash(0..<0x80000)
        #expect(throws: FlashRefusal.self) {
            _ = try SimulatedFlash.flash(
                Self.firmware(.nrf51, .r1, .counter), options: Self.options(), on: id, named: "zotig", in: &sim)
        }
        #expect(try sim.board(id).readFlash(0..<0x80000) == before)
    }

    @Test func anEditIsFlashedAndEveryReportIsNamedAndInModelledTimeOrder() throws {
        var sim = Simulation()
        let id = sim.addBoard(try Self.board(running: Self.firmware(.nrf52833, .r1, .heart)))
        let events = Mutex<[FlashEvent]>([])
        let run = try SimulatedFlash.flash(
            Self.firmware(.nrf52833, .r1, .counter), options: Self.options(), on: id, named: "zotig", in: &sim,
            onEvent: { e in events.withLock { $0.append(e) } })
        let outcome = try run.outcome.get()
        #expect(run.result.board == "zotig")
        #expect(run.result.path == outcome.path)
        #expect(outcome.path == .partial && outcome.verified, "\(outcome.reason.message)")
        let seen = events.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0.board == "zotig" })
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.elapsed <= $1.elapsed })
        #expect(seen.contains { if case .progress = $0.report { true } else { false } })
    }

    @Test func runAllGivesEachBoardsResultInTheOrderTheBoardsWereGiven() throws {
        var sim = Simulation()
        let heart = Self.firmware(.nrf52833, .r1, .heart)
        let first = sim.addBoard(try Self.board(running: heart))
        let second = sim.addBoard(try Self.board(running: heart))
        let edit = try FlashPlan.make(firmware: Self.firmware(.nrf52833, .r1, .counter), board: .microbitV2)
        let same = try FlashPlan.make(firmware: heart, board: .microbitV2)
        let runs = SimulatedFlash.runAll(
            [(edit, first, "zotig"), (same, second, "gatip")], options: Self.options(), in: &sim)
        #expect(runs.map(\.result.board) == ["zotig", "gatip"])
        #expect(try runs[0].outcome.get().path == .partial)
        #expect(try runs[1].outcome.get().path == .upToDate, "the board already runs the file")
    }
}
