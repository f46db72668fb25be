import FirmwareImage
import LinkModel
import NordicDFU
import NordicDFUFrames
import Testing
@testable import SimulatedBoard

/// Secure DFU paced by the bootloader's flash queue, end to end on the simulated link
/// (docs/nordic-dfu.md, "Pacing"): the simulated V2 bootloader drops a packet exactly when its
/// fstorage queue is full, so a client that sends before the page erase can have ended loses
/// packets, while the paced client loses none.
@Suite struct SecureDFUPacingTests {
    /// A V2 image of 11 objects and a bit (the last object is short).
    static let image = Fixture.image(
        family: .nrf52833, magicAt: 0x27000, programLength: 9000, seed: 7, programHash: [1, 2, 3, 4, 5, 6, 7, 8])

    struct Run {
        var result: NordicDFUResult?
        var statistics: NordicBootloaderStatistics
    }

    static func flash(_ options: NordicDFUOptions, link: LinkProfile) throws -> Run {
        let old = Fixture.image(
            family: .nrf52833, magicAt: 0x27000, programLength: 4000, seed: 3, programHash: [9, 9, 9, 9, 9, 9, 9, 9])
        let board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV2), image: old)
        var sim = Simulation(link: link, faults: .none)
        let id = sim.addBoard(board)
        let run = sim.run(
            NordicDFUFlow(image: Self.image, family: .nrf52833, options: options), on: id, deadline: .seconds(300))
        let statistics = try #require(try sim.board(id).nordicStatistics)
        return Run(result: try? run.outcome.get(), statistics: statistics)
    }

    @Test(
        "Paced by the flash queue, every object goes once and the bootloader drops no packet",
        arguments: [LinkProfile.linuxDefault, .deviceRequested, .fast])
    func pacedClientLosesNothing(link: LinkProfile) throws {
        let run = try Self.flash(NordicDFUOptions(), link: link)
        let result = try #require(run.result)
        #expect(result.verified)
        #expect(result.retries == 0)
        #expect(run.statistics.droppedPackets == 0)
        #expect(run.statistics.silentErrors == 0)
        #expect(run.statistics.completedUpdates == 1)
    }

    @Test(
        "A client that sends an object before its page erase can have ended loses packets and fails its checksum",
        arguments: [LinkProfile.deviceRequested, .fast])
    func eagerClientFailsItsChecks(link: LinkProfile) throws {
        var eager = NordicDFUOptions()
        eager.pageErase = .zero  // it believes the erase takes no time
        eager.secureFlashQueue = 10_000  // and that the bootloader holds any number of packets
        let run = try Self.flash(eager, link: link)
        #expect(run.statistics.droppedPackets > 0)
        // The drops show in the objects' checksums: objects are sent again or resumed.
        let result = try #require(run.result)
        #expect(result.retries > 0 || result.bytesSent > Self.applicationBytes + MicrobitAppInitPacket.size)
        #expect(result.verified)
    }

    static var applicationBytes: Int {
        (try? DFUApplication.cut(from: image, family: .nrf52833).bytes.count) ?? 0
    }
}
