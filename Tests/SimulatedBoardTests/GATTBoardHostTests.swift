import FirmwareImage
import NordicDFUFrames
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames

/// A stock board played in real time by `GATTBoardHost` (the fake BlueZ, the peripheral on
/// the real BlueZ): its GATT table per mode, the bonded buttonless entry, its clock.
@Suite struct GATTBoardHostTests {
    static func stock(_ board: Board) throws -> SimulatedBoard {
        try SimulatedBoard(profile: SimulatedBoard.stockProfile(board), image: MemoryImage())
    }

    static func table(_ board: SimulatedBoard) -> [BLEUUID: Set<BLEUUID>] {
        Dictionary(
            uniqueKeysWithValues: board.gattServices.map { ($0.service, Set($0.characteristics.map(\.characteristic))) }
        )
    }

    @Test("The table a central discovers is the application's, then only the bootloader's (nordic-dfu.md §2.2, §3.2)")
    func tablePerMode() throws {
        var v2 = try Self.stock(.microbitV2)
        #expect(
            Self.table(v2) == [
                PartialFlashingGATT.service: [PartialFlashingGATT.characteristic.characteristic],
                NordicGATT.secureService: [NordicGATT.buttonlessBonded.characteristic]
            ])
        try v2.strandInBootloader()
        #expect(
            Self.table(v2) == [
                NordicGATT.secureService: [
                    NordicGATT.secureControlPoint.characteristic, NordicGATT.securePacket.characteristic
                ]
            ])
        var v1 = try Self.stock(.microbitV1)
        #expect(Set(Self.table(v1).keys) == [PartialFlashingGATT.service, NordicGATT.dfuControlService])
        try v1.strandInBootloader()
        #expect(
            Self.table(v1) == [
                NordicGATT.legacyService: [
                    NordicGATT.legacyControlPoint.characteristic, NordicGATT.legacyPacket.characteristic,
                    NordicGATT.legacyRevision.characteristic
                ]
            ])
    }

    @Test("The bonded buttonless entry refuses a link without a bond (20 01 07) and enters with one")
    func bondedEntry() throws {
        var host = GATTBoardHost(board: try Self.stock(.microbitV2))
        let refused = host.write([0x01], to: NordicGATT.buttonlessBonded, kind: .request, bonded: false)
        #expect(refused.notifications.map(\.bytes) == [[0x20, 0x01, 0x07]])
        #expect(refused.work.isEmpty)
        let entered = host.write([0x01], to: NordicGATT.buttonlessBonded, kind: .request, bonded: true)
        #expect(entered.notifications.map(\.bytes) == [[0x20, 0x01, 0x01]])
        let reset = host.perform(try #require(entered.work.first))
        let down = try #require(reset.downFor)
        #expect(down > .zero)
        _ = host.boot()
        #expect(host.board.inNordicBootloader)
        #expect(host.board.advertisedName == "DfuTarg")
    }

    @Test("The host's clock ends the page erase after a data Create: later packets are not dropped")
    func clockEndsTheErase() throws {
        let (ready, app) = try Self.bootloaderWithInitAccepted()
        var host = ready
        func request(_ r: SecureDFURequest) -> [UInt8]? { Self.request(r, &host) }
        #expect(request(.create(.data, size: 4096)) == [0x60, 0x01, 0x01])
        // 0.3 s later the settings write after the init and the erase are over; packets that
        // come no faster than the flash writes them (61 words of 41 µs each) all fit the queue.
        host.now += .milliseconds(300)
        for offset in stride(from: 0, to: 4096, by: 244) {
            _ = host.write(
                Array(app.bytes[offset..<min(4096, offset + 244)]), to: NordicGATT.securePacket, kind: .command)
            host.now += .microseconds(61 * 41)
        }
        let checksum = try #require(request(.calculateChecksum))
        #expect(Array(checksum.prefix(7)) == [0x60, 0x03, 0x01, 0x00, 0x10, 0x00, 0x00])
    }

    @Test(
        "Packets sent during a page erase reach the board when it ends, as a central's link layer resends them"
    )
    func writesDuringAnEraseArriveWhenItEnds() throws {
        let (ready, app) = try Self.bootloaderWithInitAccepted()
        var host = ready
        func request(_ r: SecureDFURequest) -> [UInt8]? { Self.request(r, &host) }
        #expect(request(.create(.data, size: 4096)) == [0x60, 0x01, 0x01])
        let created = host.now
        // Three packets at once, while the page is still being erased (the host's clock never
        // passes the erase), then the rest no faster than the flash writes them: the first three
        // reach the board when the erase ends, and none is dropped.
        var notes: [String] = []
        for (n, offset) in stride(from: 0, to: 4096, by: 244).enumerated() {
            notes +=
                host.write(
                    Array(app.bytes[offset..<min(4096, offset + 244)]), to: NordicGATT.securePacket, kind: .command
                ).notes
            if n >= 2 { host.now += .microseconds(61 * 41) }
        }
        #expect(host.now > created, "the board's clock moved to the end of the erase")
        #expect(notes.contains { $0.contains("end of a page erase") }, "\(notes)")
        let checksum = try #require(request(.calculateChecksum))
        #expect(Array(checksum.prefix(7)) == [0x60, 0x03, 0x01, 0x00, 0x10, 0x00, 0x00])
    }

    /// A stock micro:bit V2 stranded in its bootloader, served by a host, with the init packet
    /// of a cut of `image()` sent and executed and receipts off: ready for a data Create.
    static func bootloaderWithInitAccepted() throws -> (GATTBoardHost, DFUApplication) {
        var board = try stock(.microbitV2)
        try board.strandInBootloader()
        var host = GATTBoardHost(board: board)
        let app = try DFUApplication.cut(from: image(), family: .nrf52833)
        _ = request(.create(.command, size: UInt32(app.secureInitPacket.bytes.count)), &host)
        _ = host.write(app.secureInitPacket.bytes, to: NordicGATT.securePacket, kind: .command)
        #expect(request(.execute, &host) == [0x60, 0x04, 0x01])
        _ = request(.setPRN(0), &host)
        return (host, app)
    }

    /// A control-point request and the board's last answer to it.
    static func request(_ r: SecureDFURequest, _ host: inout GATTBoardHost) -> [UInt8]? {
        host.write(r.bytes, to: NordicGATT.secureControlPoint, kind: .request).notifications.last?.bytes
    }

    static func image() -> MemoryImage {
        var image = MemoryImage()
        try? image.write((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }, at: 0x1C000)
        return image
    }
}
