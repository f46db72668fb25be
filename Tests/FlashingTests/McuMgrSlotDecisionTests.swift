import FirmwareImage
import McuMgr
import SimulatedBoard
import SimulatedFlashing
import SampleFirmware
import Testing
import TestSupport
@testable import Flashing

/// A full update over McuMgr whose image cannot fit the board's slot (from the board profile)
/// or is damaged is no path: the decision and the plan leave it out with the reason, and a
/// session that needs it refuses it (exit 65) before anything is written.
@Suite struct McuMgrSlotDecisionTests {
    typealias Story = SessionStoryTests

    /// An MCUboot image of `bytes` bytes (unsigned, SHA-256 TLV), one flash page of header.
    static func image(bytes: Int) throws -> MCUbootImage {
        let body = (0..<(bytes - 0x1000 - 40)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        return try MCUbootImage(
            bytes: MCUbootImage.build(application: body, version: MCUbootVersion(major: 3), headerSize: 0x1000))
    }

    static let slot = McuMgrUpgradeImage.profileSlotSize(for: .nrf52833)

    @Test func planLeavesOutAnImageLargerThanTheSlotWithTheReason() throws {
        let firmware = Story.firmware(.nrf52833, .r1, .counter)
        let plan = try FlashPlan.make(
            firmware: firmware, board: .microbitV2, dfuImage: Self.image(bytes: Self.slot + 4096))
        let boardless = BoardlessPlan.make(plan, board: .microbitV2)
        #expect(boardless.excluded.map(\.path) == [.mcumgr])
        let reason = try #require(boardless.excluded.first?.reason)
        #expect(
            reason.contains(
                "it has \(Self.slot + 4096) bytes and the board's slot holds \(Self.slot) (from the board profile)"))
        #expect(boardless.byProfile.allSatisfy { !$0.estimates.contains { $0.path == .mcumgr } })
        #expect(boardless.notes.contains { $0.hasPrefix("McuMgr excluded: the image cannot be installed") })
        // An image that fits is planned, and the note says where the slot size comes from.
        let fits = try FlashPlan.make(firmware: firmware, board: .microbitV2, dfuImage: Self.image(bytes: Self.slot))
        let planned = BoardlessPlan.make(fits, board: .microbitV2)
        #expect(
            planned.excluded.isEmpty && planned.byProfile.allSatisfy { $0.estimates.contains { $0.path == .mcumgr } })
        #expect(planned.notes.contains { $0.contains("its slot holds \(Self.slot) bytes (from the board profile)") })
    }

    @Test func autoNeverOffersMcuMgrForAnImageThatCannotFit() throws {
        // The board runs r1: an edit can go partial; the full image is too large for the slot.
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Story.mcuMgrBoard(.microbitV2, running: Story.firmware(.nrf52833, .r1, .heart)))
        let plan = try FlashPlan.make(
            firmware: Story.firmware(.nrf52833, .r1, .huge), board: .microbitV2,
            dfuImage: Self.image(bytes: Self.slot + 1))
        var options = Story.options()
        options.prefer = .full
        let run = SimulatedFlash.run(plan: plan, options: options, on: id, named: "sim", in: &sim)
        let outcome = try run.outcome.get()
        #expect(outcome.path == .partial)
        let decision = try #require(outcome.decision)
        #expect(decision.estimates.map(\.path) == [.partial] && decision.basis == .onlyPath)
        #expect(decision.excluded.first?.path == .mcumgr)
        #expect(
            decision.summary.contains("mcumgr excluded: the image cannot be installed: it has \(Self.slot + 1) bytes"))
    }

    @Test func aFullUpdateThatNeedsAnImageTooLargeIsRefusedBeforeAnyUpload() throws {
        // A new runtime needs a full update; the only one the board has is McuMgr.
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try Story.mcuMgrBoard(.microbitV2, running: Story.firmware(.nrf52833, .r1, .heart)))
        let before = try sim.board(id)
        let plan = try FlashPlan.make(
            firmware: Story.firmware(.nrf52833, .r2, .heart), board: .microbitV2,
            dfuImage: Self.image(bytes: Self.slot + 1))
        let run = SimulatedFlash.run(plan: plan, options: Story.options(), on: id, named: "sim", in: &sim)
        let error = try #require(run.result.error)
        #expect(
            error.contains(
                "the image cannot be installed: it has \(Self.slot + 1) bytes and the board's slot holds \(Self.slot)"))
        #expect(error.contains("nothing was sent to the board") && !error.contains("try again"))
        #expect(run.result.failureKind == .badFirmware)
        let after = try sim.board(id)
        #expect(after.smpServer?.statistics.frames == 0, "no SMP request reached the board")
        #expect(try after.readFlash(0..<0x80000) == before.readFlash(0..<0x80000))
    }

    @Test func aDamagedImageIsNoPathEither() throws {
        var image = try Self.image(bytes: 200_000).bytes
        image[100_000] ^= 0xFF
        let damaged = FlashPlan.upgradeImage(try MCUbootImage(bytes: image))
        #expect(damaged.problem(slot: .profile(.nrf52833)) != nil)
        var plan = try FlashPlan.make(firmware: Story.firmware(.nrf52833, .r1, .counter), board: .microbitV2)
        plan.fullImage = damaged
        let boardless = BoardlessPlan.make(plan, board: .microbitV2)
        #expect(
            boardless.excluded.first?.reason.contains(
                "does not match the SHA-256 of its header, body and protected TLVs") == true)
    }
}
