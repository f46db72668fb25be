import Foundation
import SimulatedFlashing
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import McuMgr
import SampleFirmware
import SimulatedBoard
@testable import Flashing

/// A session whose full update over McuMgr fails says, in its error and in the JSON result,
/// what the board holds, read back after the failure; it does not claim the board kept its
/// application, nor send the user to run the same command again whatever failed.
@Suite struct McuMgrSessionFailureTests {
    @Test func aFailedFullUpdateReportsTheSlotsReadBackInWordsAndJSON() throws {
        var sim = Simulation(link: .deviceRequested)
        let start = SessionStoryTests.firmware(.nrf52833, .r1, .heart)
        let plan = try FlashPlan.make(firmware: start, board: .microbitV2)
        let running = try #require(plan.fullImage)
        let board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: running.bytes) {
            $0.failingTrailerWrites = [.test]
        }
        let id = sim.addBoard(board)
        let newRuntime = SessionStoryTests.firmware(.nrf52833, .r2, .heart)
        let newPlan = try FlashPlan.make(firmware: newRuntime, board: .microbitV2)
        let run = SimulatedFlash.run(
            plan: newPlan, options: SessionStoryTests.options(), on: id, named: "sim", in: &sim)
        let error = try #require(run.result.error)
        #expect(error.contains("IMG_MGMT_ERR_FLASH_WRITE_FAILED"))
        #expect(error.contains("Read back after the failure, the board reports slot 0: image 1.0.0"), "\(error)")
        #expect(error.contains("slot 1: the new image"))
        #expect(!error.contains("keeps its previous application") && !error.contains("Run the same command again"))
        #expect(run.result.failureKind == .flashFailed)

        let details = try #require(run.result.reason.details?.board)
        #expect(details.source == "read-after-failure" && details.secondary == .newImage)
        #expect(details.uploadedBytes == newPlan.fullImage?.bytes.count)
        let slots = try #require(details.slots)
        #expect(slots.map(\.slot) == [0, 1])
        #expect(
            slots[0].active && slots[0].confirmed && !slots[0].newImage
                && slots[0].hash == running.hash.map { String(format: "%02x", $0) }.joined())
        #expect(slots[1].newImage && !slots[1].pending)

        // The JSON result carries them under reason.details.board.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(run.result)) as? [String: Any]
        let reason = json?["reason"] as? [String: Any]
        let jsonBoard = (reason?["details"] as? [String: Any])?["board"] as? [String: Any]
        #expect(jsonBoard?["source"] as? String == "read-after-failure")
        #expect(jsonBoard?["secondary"] as? String == "new-image")
        #expect((jsonBoard?["slots"] as? [[String: Any]])?.count == 2)
    }

    @Test func afterAPartialFallbackTheErrorSaysTheProgramRegionMayHaveChanged() {
        let board = McuMgrBoardState(
            source: .notRead("the link to the board is down"), slots: [], newImageHash: [1],
            imageBytes: 100, uploadedBytes: 40)
        let failure = McuMgrFailure(cause: .tooManyDisconnects(6), board: board)
        let reason = FlashReason(
            code: "partial-failed", message: "partial flashing failed at block 5",
            details: FlashReasonDetails(block: 5))
        let text = "\(FlashError.fullUpdateFailed(reason: reason, error: failure))"
        #expect(text.contains("the link dropped 6 times"))
        #expect(
            text.contains(
                "What the board holds now is not known: its slots could not be read back (the link to the board is down)"
            ))
        #expect(text.contains("The device had taken 40 of the new image's 100 bytes"))
        #expect(text.contains("Partial flashing had stopped at block 5 of the program region before this update"))
        #expect(!text.contains("keeps its previous application"))
        #expect(FlashError.fullUpdateFailed(reason: reason, error: failure).failureKind == .flashFailed)
        let tooLarge = McuMgrFailure(cause: .invalidImage(.tooLarge(bytes: 9, slot: 8, from: .profile)), board: board)
        #expect(FlashError.fullUpdateFailed(reason: reason, error: tooLarge).failureKind == .badFirmware)
    }
}
