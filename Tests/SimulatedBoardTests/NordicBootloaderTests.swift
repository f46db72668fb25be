import Crypto
import FirmwareImage
import LinkModel
import NordicDFU
import NordicDFUFrames
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames

/// The simulated Nordic bootloaders, request by request (docs/protocols/nordic-dfu.md §2.4, §3.3, §8).
@Suite struct NordicBootloaderTests {
    /// A stock board driven write by write, with the notifications each write produced.
    struct Bench {
        var board: SimulatedBoard
        var now = VirtualInstant.zero
        var scheduled: [Int] = []
        /// The work the last write scheduled: after how long, and its tag.
        var lastWork: [(delay: Duration, tag: Int)] = []

        init(_ board: Board) throws {
            var b = try SimulatedBoard(profile: SimulatedBoard.stockProfile(board), image: MemoryImage())
            try b.strandInBootloader()
            self.board = b
        }

        @discardableResult
        mutating func write(_ bytes: [UInt8], to ch: GATTCharacteristic, kind: WriteKind = .request) -> [[UInt8]] {
            var effects = ServiceEffects(
                now: now, timing: DeviceTiming.of(board.profile.family), rng: SplitMix64(seed: 1),
                slowErase: 0, slowEraseFactor: 1)
            _ = board.write(bytes, to: ch, kind: kind, effects: &effects)
            scheduled += effects.work.map(\.tag)
            lastWork = effects.work
            return effects.notifications.map(\.bytes)
        }

        mutating func request(_ r: SecureDFURequest) -> [UInt8]? {
            write(r.bytes, to: NordicGATT.secureControlPoint).last
        }

        /// Sends an init command (56 bytes) and executes it.
        mutating func sendInit(_ packet: [UInt8]) -> [UInt8]? {
            _ = request(.create(.command, size: UInt32(packet.count)))
            write(packet, to: NordicGATT.securePacket, kind: .command)
            return request(.execute)
        }
    }

    static let image = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 11) }

    @Test("DfuTarg offers only the bootloader's characteristics, with the secure bootloader's MTU")
    func advertisesAsDfuTarg() throws {
        let bench = try Bench(.microbitV2)
        let info = bench.board.connectionInfo(centralMTU: 247)
        #expect(info.name == "DfuTarg")
        #expect(info.services == [NordicGATT.secureService])
        #expect(info.mtu == 247)
        #expect(bench.board.serviceIndex(of: NordicGATT.buttonlessBonded) == nil)
        #expect(bench.board.serviceIndex(of: PartialFlashingGATT.characteristic) == nil)
    }

    @Test("Data objects need an executed init; the init is validated and then invalidates the old application")
    func initValidation() throws {
        var b = try Bench(.microbitV2)
        #expect(b.request(.create(.data, size: 4096)) == [0x60, 0x01, 0x08])
        var badVersion = MicrobitAppInitPacket(application: Self.image)
        badVersion.version = 2
        #expect(b.sendInit(badVersion.bytes) == [0x60, 0x04, 0x05])
        #expect(
            b.sendInit(MicrobitAppInitPacket(applicationSize: 0, hashSize: 0, storedHash: []).bytes) == [
                0x60, 0x04, 0x0B, 0x04
            ])
        #expect(
            b.sendInit(MicrobitAppInitPacket(applicationSize: 0x58004, hashSize: 0, storedHash: []).bytes) == [
                0x60, 0x04, 0x04
            ])
        #expect(b.sendInit(Array(repeating: 0x41, count: 56)) == [0x60, 0x04, 0x0B, 0x02])
        let good = MicrobitAppInitPacket(application: Self.image).bytes
        #expect(b.sendInit(good) == [0x60, 0x04, 0x01])
        #expect(b.board.nordicSettings.initCommand == good)
        #expect(!b.board.nordicSettings.applicationValid)
        #expect(b.request(.create(.data, size: 100)) == [0x60, 0x01, 0x03])  // not the last object, not a whole page
        #expect(b.request(.create(.data, size: 8192)) == [0x60, 0x01, 0x04])
        #expect(b.request(.other(opcode: 0x09, parameters: [])) == [0x60, 0x09, 0x02])  // reduced opcode set
    }

    @Test("A disconnect reloads the settings: the stored init stays, the data offset goes back to 0")
    func disconnectReloads() throws {
        var b = try Bench(.microbitV2)
        let good = MicrobitAppInitPacket(application: Self.image).bytes
        _ = b.sendInit(good)
        _ = b.request(.create(.data, size: 4096))
        b.now = b.now + .seconds(1)
        b.write(Array(Self.image[0..<244]), to: NordicGATT.securePacket, kind: .command)
        #expect(
            b.request(.calculateChecksum)
                == SecureDFUResponse.checksum(offset: 244, crc: CRC32.checksum(Self.image[0..<244])).bytes)
        b.board.linkDropped()
        #expect(
            b.request(.select(.command))
                == SecureDFUResponse.selected(maxSize: 512, offset: 56, crc: CRC32.checksum(good)).bytes)
        #expect(b.request(.select(.data)) == SecureDFUResponse.selected(maxSize: 4096, offset: 0, crc: 0).bytes)
    }

    @Test(
        "A wrong hash fails the final Execute and the board stays in its bootloader; the right one starts the application"
    )
    func finalExecute() throws {
        for correct in [false, true] {
            var b = try Bench(.microbitV2)
            var packet = MicrobitAppInitPacket(application: Self.image)
            if !correct { packet.storedHash[0] ^= 0xFF }
            _ = b.sendInit(packet.bytes)
            var offset = 0
            while offset < Self.image.count {
                let (created, size) = Self.sendDataObject(&b, from: offset)
                #expect(created == [0x60, 0x01, 0x01])
                offset += size
                let answer = b.request(.execute)
                #expect(
                    answer == (offset < Self.image.count || correct ? [0x60, 0x04, 0x01] : [0x60, 0x04, 0x0B, 0x0C]))
            }
            b.board.reset()
            #expect(b.board.inNordicBootloader == !correct)
            #expect(try b.board.readFlash(0x1C000..<(0x1C000 + UInt32(Self.image.count))) == Self.image)
        }
    }

    /// Creates the data object of `image` that starts at `offset` (at most 4096 bytes), waits out
    /// its erase, sends it in 244-byte packets one write's time apart (the queue never fills) and
    /// waits until its writes are done, so that Execute is answered at once. Returns Create's
    /// answer and the object's size.
    static func sendDataObject(_ b: inout Bench, from offset: Int) -> (created: [UInt8]?, size: Int) {
        let size = min(4096, image.count - offset)
        let created = b.request(.create(.data, size: UInt32(size)))
        b.now = b.now + .seconds(1)
        var at = offset
        while at < offset + size {
            b.write(Array(image[at..<min(offset + size, at + 244)]), to: NordicGATT.securePacket, kind: .command)
            at += 244
            b.now = b.now + .microseconds(61 * 41)  // one packet's write
        }
        b.now = b.now + .seconds(1)
        return (created, size)
    }

    /// SDK 16 `nrf_dfu_req_handler.c` `on_data_obj_execute_request_sched`: the last Execute is
    /// answered, then `nrf_dfu_settings_write_and_backup(on_dfu_complete)` erases and writes the
    /// settings page and its backup; `on_dfu_complete` → `dfu_observer` → `bootloader_reset(true)`
    /// finds the backup equal and resets at once (`NRF_BL_RESET_DELAY_MS` 0). So the reset comes
    /// two page erases and two writes of the 896-byte settings after the answer, valid image or not.
    @Test("The last Execute's reset follows the settings write: two page erases and two writes of the settings")
    func finalExecuteResetsWhenTheSettingsAreWritten() throws {
        let timing = DeviceTiming.of(.nrf52833)
        let settingsWrite = timing.wordWrite * ((SecureDFUBootloaderLimits.settingsBytes + 3) / 4)
        let expected = (timing.pageErase + settingsWrite) * 2
        for correct in [false, true] {
            var b = try Bench(.microbitV2)
            var packet = MicrobitAppInitPacket(application: Self.image)
            if !correct { packet.storedHash[0] ^= 0xFF }
            _ = b.sendInit(packet.bytes)
            var offset = 0
            var resets: [Duration] = []
            while offset < Self.image.count {
                offset += Self.sendDataObject(&b, from: offset).size
                _ = b.request(.execute)
                resets += b.lastWork.filter { $0.tag == SecureDFUBootloader.resetTag }.map(\.delay)
            }
            #expect(resets == [expected], "valid image: \(correct)")
        }
    }

    /// V2 bootloader `nrf_dfu_req_handler.c` `on_data_obj_write_request`: a packet that finds the
    /// flash queue (`NRF_FSTORAGE_SD_QUEUE_SIZE` 16, one slot held by the erase) full is freed
    /// unwritten and answered, if a receipt falls due, with the zeroed response (offset 0, CRC 0).
    @Test("Packets that outrun the page erase beyond the free flash-queue slots are dropped; the PRN shows offset 0")
    func packetsThatFindTheFlashQueueFullAreDroppedSilently() throws {
        var b = try Bench(.microbitV2)
        _ = b.sendInit(MicrobitAppInitPacket(application: Self.image).bytes)
        b.now = b.now + .seconds(1)  // the settings write after the init has ended
        _ = b.request(.setPRN(16))
        _ = b.request(.create(.data, size: 4096))
        var receipts: [[UInt8]] = []
        for i in 0..<16 {
            receipts += b.write(
                Array(Self.image[(i * 244)..<((i + 1) * 244)]), to: NordicGATT.securePacket, kind: .command)
        }
        #expect(receipts == [SecureDFUResponse.checksum(offset: 0, crc: 0).bytes])
        #expect(b.board.nordicStatistics?.droppedPackets == 1)
        // Once the erase (85 ms) and one packet's write (61 words of 41 µs) have ended, two more fit.
        b.now = b.now + .milliseconds(85) + .microseconds(61 * 41)
        b.write(Array(Self.image[(15 * 244)..<(16 * 244)]), to: NordicGATT.securePacket, kind: .command)
        b.write(Array(Self.image[(16 * 244)..<4096]), to: NordicGATT.securePacket, kind: .command)
        #expect(b.board.nordicStatistics?.droppedPackets == 1)
        let checksum = b.request(.calculateChecksum)
        #expect(checksum == SecureDFUResponse.checksum(offset: 4096, crc: CRC32.checksum(Self.image[0..<4096])).bytes)
    }

    /// The init packet's Execute writes the settings and their backup (SDK 16
    /// `nrf_dfu_settings_write_and_backup`: four fstorage operations) and answers at once: the
    /// first object's erase waits behind them, and only 16 − 4 − 1 = 11 packets fit meanwhile.
    @Test("Right after the init's Execute the settings write holds four queue entries: the twelfth packet is dropped")
    func settingsWriteHoldsQueueEntries() throws {
        var b = try Bench(.microbitV2)
        #expect(b.sendInit(MicrobitAppInitPacket(application: Self.image).bytes) == [0x60, 0x04, 0x01])
        _ = b.request(.create(.data, size: 4096))
        for i in 0..<12 {
            b.write(Array(Self.image[(i * 244)..<((i + 1) * 244)]), to: NordicGATT.securePacket, kind: .command)
        }
        #expect(b.board.nordicStatistics?.droppedPackets == 1)
    }

    @Test("Legacy: Start erases and invalidates, data before the init is refused, Validate checks the CRC-16")
    func legacyBootloader() throws {
        var b = try Bench(.microbitV1)
        #expect(b.board.connectionInfo(centralMTU: 247).mtu == 23)
        let cp = NordicGATT.legacyControlPoint, packet = NordicGATT.legacyPacket
        let app = Array(Self.image[0..<400])
        b.write([0x01, 0x04], to: cp)
        // Answered after the erase.
        #expect(b.write(LegacyImageSizes(application: 400).bytes, to: packet, kind: .command).isEmpty)
        #expect(b.scheduled.contains(LegacyDFUBootloader.eraseTag))
        var effects = ServiceEffects(
            now: .zero, timing: .of(.nrf51), rng: SplitMix64(seed: 1), slowErase: 0, slowEraseFactor: 1)
        let index = try #require(b.board.serviceIndex(of: cp))
        b.board.workDone(service: index, tag: LegacyDFUBootloader.eraseTag, effects: &effects)
        #expect(effects.notifications.map(\.bytes) == [[0x10, 0x01, 0x01]])
        #expect(!b.board.nordicSettings.applicationValid)
        #expect(b.write([0x03], to: cp) == [[0x10, 0x03, 0x02]])
        var wrong = LegacyInitPacket(application: app)
        wrong.crc16 ^= 1
        b.write([0x02, 0x00], to: cp)
        b.write(wrong.bytes, to: packet, kind: .command)
        #expect(b.write([0x02, 0x01], to: cp) == [[0x10, 0x02, 0x01]])
        b.write([0x03], to: cp)
        var last: [[UInt8]] = []
        for at in stride(from: 0, to: app.count, by: 20) {
            last = b.write(Array(app[at..<(at + 20)]), to: packet, kind: .command)
        }
        #expect(last == [[0x10, 0x03, 0x01]])
        #expect(b.write([0x04], to: cp) == [[0x10, 0x04, 0x05]])
        #expect(b.write([0x01, 0x04], to: cp) == [[0x10, 0x01, 0x02]])  // no second Start in this session
    }
}

/// The bootloaders' inactivity reset: 120 s without progress restarts the board.
@Suite struct InactivityWatchdogTests {
    func effects(at seconds: Int64) -> ServiceEffects {
        ServiceEffects(
            now: VirtualInstant.zero + .seconds(seconds), timing: DeviceTiming.of(.nrf52833),
            rng: SplitMix64(seed: 1), slowErase: 0, slowEraseFactor: 1)
    }

    @Test("Progress starts one timer of 120 s; more progress only moves the deadline")
    func progressMovesTheDeadline() {
        var dog = InactivityWatchdog(tag: 3)
        var first = effects(at: 0)
        dog.touch(effects: &first)
        #expect(first.work.map(\.delay) == [.seconds(120)] && first.work.map(\.tag) == [3])
        var second = effects(at: 50)
        dog.touch(effects: &second)
        #expect(second.work.isEmpty && dog.isRunning)
        // The timer fires at 120 s, 50 s early: the rest is scheduled, no reset.
        var early = effects(at: 120)
        let resetEarly = dog.fired(effects: &early)
        #expect(!resetEarly)
        #expect(early.work.map(\.delay) == [.seconds(50)])
        var due = effects(at: 170)
        let resetDue = dog.fired(effects: &due)
        #expect(resetDue)
        #expect(due.work.isEmpty && !dog.isRunning)
    }

    @Test("Without any progress, or after a boot, a firing resets nothing")
    func noProgressNoReset() {
        var dog = InactivityWatchdog(tag: 3)
        var fired = effects(at: 500)
        let resetIdle = dog.fired(effects: &fired)
        #expect(!resetIdle)
        var touched = effects(at: 0)
        dog.touch(effects: &touched)
        dog.reset()
        var later = effects(at: 500)
        let resetAfterBoot = dog.fired(effects: &later)
        #expect(!resetAfterBoot && dog.lastProgress == nil)
    }
}
