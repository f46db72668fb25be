import FirmwareImage
import LinkModel
import NordicDFU
import NordicDFUFrames
import Testing
@testable import SimulatedBoard

/// Secure DFU paced by the bootloader's flash queue, end to end on the simulated link
/// (docs/nordic-dfu.md, "Pacing"): the simulated V2 bootloader drops a packet exactly when its
/// fstorage queue is full, and its radio misses every connection event while the chip erases a
/// page, so a Create's answer comes only after the erase and packets sent during it reach the
/// board after it.
@Suite struct SecureDFUPacingTests {
    /// A V2 image of 11 objects and a bit (the last object is short).
    static let image = Fixture.image(
        family: .nrf52833, magicAt: 0x27000, programLength: 9000, seed: 7, programHash: [1, 2, 3, 4, 5, 6, 7, 8])

    struct Run {
        var result: NordicDFUResult?
        var statistics: NordicBootloaderStatistics
        var trace: [TraceEntry]
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
        return Run(result: try? run.outcome.get(), statistics: statistics, trace: run.trace.entries)
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
        "A client that sends a whole object at once loses nothing: its packets wait out the page erase on the link",
        arguments: [LinkProfile.deviceRequested, .fast])
    func eagerClientsPacketsWaitOutTheErase(link: LinkProfile) throws {
        var eager = NordicDFUOptions()
        eager.pageErase = .zero  // it believes the erase takes no time
        eager.secureFlashQueue = 10_000  // and that the bootloader holds any number of packets
        let run = try Self.flash(eager, link: link)
        let result = try #require(run.result)
        #expect(result.verified)
        #expect(run.statistics.droppedPackets == 0)
        #expect(result.bytesSent == Self.applicationBytes + MicrobitAppInitPacket.size)
    }

    @Test(
        "The board misses the connection events of a page erase: each data Create is answered 85 ms or more after it left",
        arguments: [LinkProfile.linuxDefault, .deviceRequested, .fast])
    func createIsAnsweredAfterItsErase(link: LinkProfile) throws {
        let run = try Self.flash(NordicDFUOptions(), link: link)
        #expect(run.result?.verified == true)
        let create = SecureDFURequest.create(.data, size: 4096).bytes.hexString
        let answer = SecureDFUResponse.success(opcode: 0x01).bytes.hexString
        var sent: Int64?
        var delays: [Int64] = []
        for entry in run.trace {
            if entry.kind == .write, entry.text.hasSuffix(create) { sent = entry.t }
            if entry.kind == .notification, entry.text == answer, let at = sent {
                delays.append(entry.t - at)
                sent = nil
            }
        }
        #expect(delays.count == Self.applicationBytes / 4096)  // every whole object
        #expect(delays.allSatisfy { $0 >= 85_000 })
        #expect(run.trace.contains { $0.kind == .event && $0.text.hasSuffix("missed, the board is erasing flash") })
    }

    static var applicationBytes: Int {
        (try? DFUApplication.cut(from: image, family: .nrf52833).bytes.count) ?? 0
    }
}
