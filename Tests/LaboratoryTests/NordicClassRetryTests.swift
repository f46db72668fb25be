import FirmwareImage
import Flashing
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Testing
@testable import Laboratory

/// A class of stock micro:bit V2 boards updated by Secure DFU through one adapter whose radio
/// they share: with no fault on the link no board takes a retry, and a lost packet still costs one.
@Suite struct NordicClassRetryTests {
    /// The class benchmark's Nordic DFU class of `boards` boards, each flashed the same way, on `faults`.
    static func nordicClass(boards: Int, faults: FaultPlan) throws -> [SimulatedFlashRun] {
        let scenario = ClassBench.scenario(.nordic)
        let plan = try ClassBench.samplePlan(.nordic)
        let running = try scenario.running.image(for: scenario.board)
        var sim = Simulation(link: .linuxDefault, faults: faults)
        var entries: [(plan: FlashPlan, board: BoardID, name: String)] = []
        for i in 0..<boards {
            let board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(scenario.board), image: running)
            entries.append((plan, sim.addBoard(board), "sim-\(i + 1)"))
        }
        var options = BenchStrategy.nordic.options
        options.mode = .full
        return SimulatedFlash.runAll(entries, options: options, in: &sim)
    }

    @Test func aSecureDFUClassOf32BoardsOnOneRadioTakesNoRetry() {
        // Before the fix: 16 retries, every one a link that closed after the final validation.
        let row = ClassBench.run(.nordic, boards: 32, profile: .linuxDefault)
        #expect(row.failures == 0)
        #expect(row.retries == 0)
    }

    @Test func aLostFirmwarePacketInAClassStillCostsItsRetry() throws {
        let clean = try Self.nordicClass(boards: 1, faults: .none)
        // The 20th packet write (a Write Command): a firmware packet of the second data object.
        let writes = clean[0].trace.entries.filter { $0.kind == .write }
        let packets = writes.indices.filter { writes[$0].text.hasPrefix("command") }
        #expect(clean[0].result.retries == 0)
        try #require(packets.count > 20)
        var faults = FaultPlan(seed: 1)
        faults.dropWriteAt = [packets[20]]
        let runs = try Self.nordicClass(boards: 4, faults: faults)
        for run in runs {
            #expect(run.result.error == nil)
            #expect(run.result.path == .full)
            #expect(run.result.verified)
            #expect(run.result.retries >= 1, "\(run.result.board): the lost packet cost no retry")
        }
        #expect(runs[0].statistics.faults.droppedWrites == 4)
    }
}
