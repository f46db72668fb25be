import FirmwareImage
import LinkModel
import McuMgr
import SMP
import Testing
import Transport
@testable import SimulatedBoard

/// Every failed McuMgr upgrade says what the board holds now, as read back from the simulated
/// Zephyr server after the failure, or that it could not be read; and it claims nothing else.
@Suite struct McuMgrFailureReadBackTests {
    struct Failed {
        var failure: McuMgrFailure
        var board: SimulatedBoard
        var old: SimulatedMCUbootImage
        var new: SimulatedMCUbootImage
    }

    static func failedUpgrade(
        mode: McuMgrUpgradeMode = .testAndConfirm, faults: FaultPlan = .none, image: SimulatedMCUbootImage? = nil,
        configure: (inout SMPServerConfiguration) -> Void
    ) throws -> Failed {
        let (old, fixture) = try SMPFixture.images(magicAt: 0x30000, programLength: 0x2000)
        let new = image ?? fixture
        var sim = Simulation(link: .deviceRequested, faults: faults)
        sim.recordsTrace = false
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes, configure: configure))
        var options = SMPFixture.options(mode, fast: true)
        options.reconnectAttempts = 2
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: options), on: id, deadline: .seconds(900))
        guard case let .failure(error) = run.outcome, let failure = error as? McuMgrFailure else {
            throw Unexpected(outcome: "\(run.outcome)")
        }
        return Failed(failure: failure, board: try sim.board(id), old: old, new: new)
    }

    struct Unexpected: Error { var outcome: String }

    static func slot(_ state: McuMgrBoardState, _ n: Int) -> ImageSlotState? { state.slots.first { $0.slot == n } }

    @Test func aFailedUploadReportsAPartialCopyBesideTheRunningImage() throws {
        // The server's flash write fails at some chunk in the middle (seeded).
        let f = try Self.failedUpgrade { $0.flashWriteFailureProbability = 0.08 }
        #expect(f.failure.cause == .deviceRefused(command: "image upload", .group(.image(.flashWriteFailed))))
        let state = f.failure.board
        #expect(state.source == .readAfterFailure)
        let running = try #require(Self.slot(state, 0))
        #expect(running.hash == f.old.hash && running.active && running.confirmed && !running.pending)
        #expect(Self.slot(state, 1) == nil, "a partly written slot has no readable image")
        #expect(state.secondary == .partialNewImage)
        let taken = try #require(state.uploadedBytes)
        #expect(taken > 0 && taken < f.new.bytes.count)
        let text = "\(f.failure)"
        #expect(
            text.contains(
                "Read back after the failure, the board reports slot 0: image 1.0.0 (hash \(Self.short(f.old.hash))), active, confirmed"
            ))
        #expect(text.contains("slot 1: no readable image (a partial copy of the new image)"))
        #expect(text.contains("The device had taken \(taken) of the new image's \(f.new.bytes.count) bytes"))
        #expect(!text.contains("keeps its previous application"))
    }

    @Test func aFailedTestReportsTheCompleteNewImageNotPending() throws {
        let f = try Self.failedUpgrade { $0.failingTrailerWrites = [.test] }
        #expect(
            f.failure.cause == .deviceRefused(command: "image test (state write)", .group(.image(.flashWriteFailed))))
        let state = f.failure.board
        #expect(state.source == .readAfterFailure && state.secondary == .newImage)
        let waiting = try #require(Self.slot(state, 1))
        #expect(waiting.hash == f.new.hash && !waiting.pending && !waiting.confirmed && !waiting.active)
        #expect(Self.slot(state, 0)?.hash == f.old.hash && Self.slot(state, 0)?.confirmed == true)
        #expect(
            "\(f.failure)".contains(
                "slot 1: the new image 2.1.3.4 (hash \(Self.short(f.new.hash))), not confirmed, complete"))
    }

    @Test func aFailedConfirmReportsTheNewImageRunningUnconfirmed() throws {
        // The test and the swap work; confirming the running image fails.
        let f = try Self.failedUpgrade { $0.failingTrailerWrites = [.confirm] }
        #expect(
            f.failure.cause == .deviceRefused(command: "image confirm (state write)", .group(.image(.flashWriteFailed)))
        )
        let state = f.failure.board
        #expect(state.source == .readAfterFailure)
        let running = try #require(Self.slot(state, 0))
        #expect(running.hash == f.new.hash && running.active && !running.confirmed)
        let old = try #require(Self.slot(state, 1))
        #expect(old.hash == f.old.hash && old.confirmed && !old.active)
        #expect(state.secondary == .otherImage)
        #expect(
            "\(f.failure)".contains(
                "slot 0: the new image 2.1.3.4 (hash \(Self.short(f.new.hash))), active, not confirmed"))
        // The board itself: the new image runs and reverts at the next reset.
        #expect(f.board.smpServer?.primaryConfirmed == false)
    }

    @Test func aConfirmForTheNextBootThatFailsReportsTheImageNotPending() throws {
        let f = try Self.failedUpgrade(mode: .confirmOnly) { $0.failingTrailerWrites = [.confirm] }
        #expect(
            f.failure.cause == .deviceRefused(command: "image confirm (state write)", .group(.image(.flashWriteFailed)))
        )
        let waiting = try #require(Self.slot(f.failure.board, 1))
        #expect(waiting.hash == f.new.hash && !waiting.pending && !waiting.permanent)
    }

    @Test func aBoardThatDoesNotComeBackAfterTheResetIsReportedUnread() throws {
        // Every connection after the reset is refused: nothing can be read.
        var faults = FaultPlan(seed: 3)
        faults.refuseConnection = 1
        let f = try Self.failedUpgrade(faults: faults) { _ in }
        guard case .reconnectFailed = f.failure.cause else {
            Issue.record("expected a failed reconnection, got \(f.failure.cause)")
            return
        }
        #expect(f.failure.board.source == .notRead("the link to the board is down"))
        #expect(f.failure.board.slots.isEmpty && f.failure.board.secondary == nil)
        let text = "\(f.failure)"
        #expect(
            text.contains(
                "What the board holds now is not known: its slots could not be read back (the link to the board is down)"
            ))
        #expect(!text.contains("slot 0:"))
    }

    @Test func anUploadRefusedAtItsFirstChunkReportsNothingNewInTheSecondarySlot() throws {
        // The upload is refused at its first chunk (too large for the slot): nothing was written.
        let large = try SimulatedMCUbootImage(payload: [UInt8](repeating: 0x5A, count: 0x5A000))
        let f = try Self.failedUpgrade(image: large) { _ in }
        #expect(f.failure.cause == .deviceRefused(command: "image upload", .group(.image(.invalidImageTooLarge))))
        // A chunk went out, so the slots are read again; the secondary slot holds nothing new.
        #expect(f.failure.board.source == .readAfterFailure)
        #expect(f.failure.board.uploadedBytes == 0 && f.failure.board.secondary == .noImage)
        #expect(Self.slot(f.failure.board, 0)?.hash == f.old.hash)
    }

    static func short(_ hash: [UInt8]) -> String { hash.prefix(8).map { String(format: "%02x", $0) }.joined() + "…" }
}
