import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// "Verified" after a partial flash needs a restart after END_OF_TRANSMISSION. A board written
/// in application mode that never got END_OF_TRANSMISSION keeps running, in application mode,
/// and reports the new program's hash (CODAL and DAL build the memory map at each REGION_INFO)
/// with `flashIncomplete` set: at its next reset it boots into pairing mode. A read-back in
/// application mode shows no restart then, so the flow restarts the board itself (`FF 01`).
@Suite struct ProvenRestartTests {
    static let family = ChipFamily.nrf52833
    static let old = Fixture.image(family: family, magicAt: 0x47000, programLength: 6000, seed: 3)
    static let new = Fixture.image(
        family: family, magicAt: 0x47000, programLength: 2500, seed: 5,
        programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])

    /// A board running its program, written in application mode (no switch to pairing mode);
    /// the link is lost as write `lostAt` goes on air.
    static func flash(losingLinkAt lostAt: Int?) throws -> SimulatedPartialFlash {
        var faults = FaultPlan(seed: 1)
        if let lostAt { faults.disconnectAtWrite = [lostAt] }
        return try SimulatedPartialFlash(
            old: old, new: new, family: family, mode: .application,
            settings: PartialFlashSettings(switchToPairingMode: false), faults: faults, deadline: .seconds(300))
    }

    @Test func aLostEndOfTransmissionInApplicationModeIsFoundAndTheFlashEnded() throws {
        let clean = try Self.flash(losingLinkAt: nil)
        let end = try #require(clean.writes.lastIndex(of: "command 02"), "\(clean.writes.suffix(3))")
        let run = try Self.flash(losingLinkAt: end)
        guard case let .success(.flashed(stats)) = run.outcome else {
            Issue.record("\(run.outcome)")
            return
        }
        let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
        #expect(stats.verified, "\(stats.unverifiedReason ?? "")")
        #expect(!run.board.flashIncomplete, "reported verified, but the board would boot into pairing mode")
        #expect(run.board.mode == .application)
        #expect(try run.board.readFlash(program.region) == Self.new.read(program.region, fill: 0xFF))
        #expect(stats.pageRewrites == 1, "the board came back in pairing mode and one page ended the flash")
        #expect(run.writes.contains("command FF01"), "the board was restarted into its program to prove it")
    }

    @Test func aCleanWriteInApplicationModeIsProvenByOneMoreRestart() throws {
        let run = try Self.flash(losingLinkAt: nil)
        guard case let .success(.flashed(stats)) = run.outcome else {
            Issue.record("\(run.outcome)")
            return
        }
        #expect(stats.verified && stats.pageRewrites == 0)
        #expect(!run.board.flashIncomplete && run.board.mode == .application)
        #expect(run.writes.filter { $0 == "command FF01" }.count == 1)
    }
}
