import FirmwareImage
import PartialFlashingFrames
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// One partial flash of `new` onto a simulated micro:bit V2 holding `old`, on the
/// device-requested link with `faults`: the outcome, the board after it, and what the trace saw.
struct SimulatedPartialFlash {
    var outcome: Result<PartialFlashResult, any Error>
    var board: SimulatedBoard
    var faults: FaultCounters
    var writes: [String]
    var notifications: [String]

    init(
        old: MemoryImage, new: MemoryImage, family: ChipFamily = .nrf52833, mode: BoardMode,
        settings: PartialFlashSettings = PartialFlashSettings(), faults plan: FaultPlan,
        deadline: Duration = .seconds(600)
    ) throws {
        let program = try #require(MakeCodeProgram.find(in: new, family: family))
        var sim = Simulation(link: .deviceRequested, faults: plan)
        let id = sim.addBoard(try SimulatedBoard(.microbitV2, image: old, mode: mode, bluetoothInApplicationMode: true))
        let run = sim.run(
            PartialFlashFlow(image: new, program: program, family: family, settings: settings), on: id,
            deadline: deadline)
        outcome = run.outcome
        board = try sim.board(id)
        faults = run.statistics.faults
        writes = run.trace.entries.filter { $0.kind == .write }.map(\.text)
        notifications = run.trace.entries.filter { $0.kind == .notification }.map(\.text)
    }
}
