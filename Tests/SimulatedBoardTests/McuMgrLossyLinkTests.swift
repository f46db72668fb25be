import FirmwareImage
import LinkModel
import McuMgr
import SMP
import Testing
import Transport
@testable import SimulatedBoard

/// McuMgr upgrades of a 185 KB image over a link that loses a share of the client's writes
/// (`FaultPlan.dropWrite`), against the simulated Zephyr SMP server. The upload's retry
/// budget is tied to progress, so these uploads, which retry far more than any fixed budget
/// would allow while they keep advancing, finish.
@Suite struct McuMgrLossyLinkTests {
    struct Figures: CustomStringConvertible {
        var loss: Double
        var seed: UInt64
        var seconds: Double
        var result: McuMgrResult
        var lostWrites: Int
        var description: String {
            "lost writes \(Int(loss * 100)) % seed \(seed): \(String(format: "%.1f", seconds)) s modelled, "
                + "\(result.retries) retries (at most \(result.mostRetriesWithoutProgress) in a row without progress), "
                + "\(result.resumes) resumes, \(result.resentBytes) bytes re-sent, \(lostWrites) writes lost"
        }
    }

    static func upgrade(loss: Double, seed: UInt64) throws -> (Figures, SimulatedBoard, SimulatedMCUbootImage) {
        let (old, new) = try SMPFixture.images(magicAt: 0x44000, programLength: 0x5000)
        var plan = FaultPlan(seed: seed)
        plan.dropWrite = loss
        var sim = Simulation(link: .deviceRequested, faults: plan)
        sim.recordsTrace = false
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
        var options = McuMgrUpgradeOptions()
        options.traceBytes = 0
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: options), on: id, deadline: .seconds(900))
        let result = try run.outcome.get()
        let (s, atto) = run.modelledTime.components
        return (
            Figures(
                loss: loss, seed: seed, seconds: Double(s) + Double(atto) / 1e18, result: result,
                lostWrites: run.statistics.faults.droppedWrites), try sim.board(id), new
        )
    }

    @Test(arguments: [0.05, 0.10])
    func anUploadThatLosesWritesFinishesVerified(loss: Double) throws {
        var lines: [String] = []
        for seed in UInt64(1)...3 {
            let (figures, board, new) = try Self.upgrade(loss: loss, seed: seed)
            lines.append("\(figures)")
            let slot = try #require(board.smpServer).configuration.primarySlot
            #expect(try board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(new.bytes.count))) == new.bytes)
            #expect(figures.result.finalSlots.first { $0.slot == 0 }?.hash == new.hash)
            #expect(figures.lostWrites > 30, "the link lost writes")
            // More retries than a fixed budget of 25 allowed, and a bounded number in a row.
            #expect(figures.result.retries > 25)
            #expect(figures.result.mostRetriesWithoutProgress <= McuMgrUpgradeOptions().maximumRetriesWithoutProgress)
        }
        print(lines.joined(separator: "\n"))
    }
}
