import FirmwareImage
import Laboratory
import LinkModel
import SampleFirmware
import SimulatedBoard
import SimulatedFlashing
import Testing
@testable import Flashing

/// Boards that lie (region info outside flash, a moving region 2, acknowledgements for blocks
/// never sent, oversized and truncated notifications, SMP answers with wrong sequence numbers,
/// huge lengths or wrong slot hashes): bitflash refuses or recovers with a clear message, never
/// writes outside the region the board declared, and an honest board is repaired afterwards.
@Suite struct HostileBoardTests {
    static func plan(_ board: Board, _ runtime: SampleFirmware.RuntimeID, _ program: SampleFirmware.ProgramID) throws
        -> FlashPlan
    {
        let image = SampleFirmware.image(family: board.family, runtime: runtime, program: program)
        return try FlashPlan.make(
            firmware: Firmware(
                fileName: "\(runtime)-\(program).hex", format: .intelHex,
                sections: [.init(family: board.family, image: image, warnings: [])]),
            board: board)
    }

    /// The board and the flash each lie is tried with: partial-flashing lies on a stock board
    /// (`--mode partial`) and on an MCUboot board (`--mode auto`); SMP lies on a full update.
    static func cases() -> [(HostileKind, Board, CampaignBoardKind, FlashMode)] {
        HostileKind.firmwareKinds.flatMap { kind -> [(HostileKind, Board, CampaignBoardKind, FlashMode)] in
            kind.isSMP
                ? [(kind, .microbitV2, .mcuboot, .full), (kind, .microbitV1, .mcuboot, .full)]
                : [
                    (kind, .microbitV2, .stock, .partial), (kind, .microbitV1, .stock, .partial),
                    (kind, .microbitV2, .mcuboot, .auto)
                ]
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: HostileKind, board: Board, boardKind: CampaignBoardKind, mode: FlashMode
        var testDescription: String {
            "\(kind.rawValue) on \(board.rawValue) \(boardKind.rawValue), --mode \(mode.rawValue)"
        }
    }

    static let all: [Case] = cases().map { Case(kind: $0.0, board: $0.1, boardKind: $0.2, mode: $0.3) }

    @Test(arguments: all)
    func hostileBoardIsRefusedOrSurvivedAndNothingLandsOutsideTheDeclaredRegion(_ c: Case) throws {
        let start = try Self.plan(c.board, .r1, .heart)
        // Partial lies: an edit of the program. SMP lies: a new runtime, so the full update runs.
        let target = try Self.plan(c.board, c.kind.isSMP ? .r2 : .r1, .counter)
        var board: SimulatedBoard
        switch c.boardKind {
        case .stock:
            board = try SimulatedBoard(c.board, image: start.image, mode: .pairing, bluetoothInApplicationMode: true)
        case .nordic:
            board = try SimulatedBoard(
                profile: SimulatedBoard.stockProfile(c.board), image: start.image, mode: .pairing)
        case .mcuboot: board = try SimulatedBoard.mcuMgrBoard(c.board, primary: try #require(start.fullImage).bytes)
        }
        let declared = CampaignInvariants.declaredProgramRegion(of: board)
        board.makeHostile(c.kind)
        board.resetFlashCounters()
        var options = FlashOptions(mode: c.mode)
        options.mcumgr.estimatedSwapTime = .seconds(2)
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(board)
        let run = SimulatedFlash.run(plan: target, options: options, on: id, named: "sim", in: &sim)
        let after = try sim.board(id)

        // Every block bitflash sent was addressed inside the declared region.
        let sent = run.trace.entries.filter { $0.kind == .report && $0.text.hasPrefix("trace: block ") }
            .compactMap {
                $0.text.split(separator: " ").first { $0.hasPrefix("0x") }.flatMap {
                    UInt32($0.dropFirst(2), radix: 16)
                }
            }
        #expect(
            sent.allSatisfy { declared.contains($0) && declared.contains($0 + 63) },
            "\(sent.filter { !declared.contains($0) })")
        if c.kind != .phantomAcks {
            #expect(
                CampaignInvariants.checkWrites(before: board, after: after, declared: declared).isEmpty,
                "\(after.flash.writeLog)")
        }
        // Acknowledgements for blocks never sent make bitflash start the next block while the board
        // still assembles the last one in its single buffer (docs/protocols/partial-flashing.md §3.1), so
        // such a board may burn a block at a wrong address itself; bitflash cannot see it happen,
        // but the run must not end as a verified success unless the board holds the program.
        switch run.outcome {
        case let .success(outcome):
            // Survived: only if the board really holds the target and reports its hashes.
            let found = CampaignInvariants.checkSuccess(outcome, plan: target, board: after)
            #expect(found.isEmpty, "\(found)")
        case let .failure(error):
            #expect(CampaignInvariants.checkFailure(error, message: run.result.error).isEmpty, "\(error)")
        }
        if c.kind == .regionOutsideFlash, c.mode == .partial {
            // A program region outside the flash is never partial-flashed.
            #expect(run.result.error != nil)
            #expect(after.flash.writeLog.isEmpty)
        }

        // The same board, honest again, is repaired by a plain run. A board whose flash work hangs
        // on a write its SoftDevice refused (the run said to reset it) is reset first, as told.
        var honest = after
        if honest.flashWorkHangs {
            #expect(run.result.error != nil, "a hung board cannot have been flashed")
            honest.reset()
        }
        honest.makeHonest()
        var plain = Simulation(link: .deviceRequested)
        let again = plain.addBoard(honest)
        let repair = SimulatedFlash.run(plan: target, options: options, on: again, named: "sim", in: &plain)
        #expect(repair.result.error == nil, "\(repair.result.error ?? "")")
        if case let .success(outcome) = repair.outcome {
            #expect(CampaignInvariants.checkSuccess(outcome, plan: target, board: try plain.board(again)).isEmpty)
        }
    }

    @Test func campaignWithAHostileBoardKeepsEveryInvariant() {
        var campaign = FaultCampaign(
            FaultCampaign.Configuration(runs: 30, seed: 11, paths: [.partial, .auto], hostile: .movingRegion))
        let report = campaign.run()
        #expect(report.violations.isEmpty, "\(report.table())")
    }
}
