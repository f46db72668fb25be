import FirmwareImage
import LinkModel
import NordicDFUFrames
import PartialFlashing
import PartialFlashingFrames
import Testing
import Transport
@testable import SimulatedBoard

/// The partial-flashing flash work on virtual time, as CODAL's `partialFlashingEvent` runs it:
/// the key-value write, then `offset`, the erase and the burn, and only then `01 FF`; events
/// raised meanwhile run back to back (codal-microbit-v2
/// `source/bluetooth/MicroBitPartialFlashingService.cpp`, codal-core `MessageBus`).
@Suite struct FlashWorkOrderTests {
    /// A board driven with its work on a clock: writes happen at `now`, work at its due time.
    struct TimedBench {
        var board: SimulatedBoard
        var now = Duration.zero
        var due: [(at: Duration, tag: Int)] = []
        var answers: [(at: Duration, bytes: [UInt8])] = []
        var reboots = 0
        var disconnects = 0
        var flashOperationError = 0.0

        init(_ board: SimulatedBoard) { self.board = board }

        mutating func write(_ bytes: [UInt8], to ch: GATTCharacteristic = PartialFlashingGATT.characteristic) {
            var fx = effects()
            let kind: WriteKind = ch == PartialFlashingGATT.characteristic ? .command : .request
            let service = board.write(bytes, to: ch, kind: kind, effects: &fx) ?? 0
            absorb(fx, service: service)
        }

        mutating func block(_ address: UInt32, _ data: [UInt8], first: UInt8) {
            for p in Fixture.packets(address: address, data: data, first: first) { write(p) }
        }

        /// Runs the work due up to `until` (all of it when nil), in time order.
        mutating func run(until: Duration? = nil) {
            while let next = due.indices.min(by: { due[$0].at < due[$1].at }) {
                if let until, due[next].at > until { break }
                let item = due.remove(at: next)
                now = max(now, item.at)
                var fx = effects()
                board.workDone(service: item.tag >> 8, tag: item.tag & 0xFF, effects: &fx)
                absorb(fx, service: item.tag >> 8)
            }
            if let until { now = max(now, until) }
        }

        private func effects() -> ServiceEffects {
            ServiceEffects(
                now: VirtualInstant.zero + now, timing: DeviceTiming.of(board.profile.family),
                rng: SplitMix64(seed: 1), slowErase: 0, slowEraseFactor: 1, flashOperationError: flashOperationError)
        }

        private mutating func absorb(_ fx: ServiceEffects, service: Int) {
            answers += fx.notifications.map { (now, $0.bytes) }
            due += fx.work.map { (now + $0.delay, service << 8 | $0.tag) }
            if fx.disconnectRequested { disconnects += 1 }
            if fx.rebootRequested {
                reboots += 1
                due = []
                board.reset()
            }
        }
    }

    static let ok: [UInt8] = [0x01, 0xFF]
    let data0 = Fixture.pattern(64, seed: 1), data1 = Fixture.pattern(64, seed: 2)

    /// A V2 board in pairing mode (by the user's gesture: no `flashIncomplete` yet) whose page
    /// 0x50000 holds old bytes in its first 64.
    func board() throws -> SimulatedBoard {
        var image = MemoryImage()
        try image.write([UInt8](repeating: 0x00, count: 64), at: 0x50000)
        var b = try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: image)
        b.reset(holdingButtons: true)
        return b
    }

    @Test func theAnswerComesAfterTheKeyValueWriteTheEraseAndTheBurn() throws {
        var b = TimedBench(try board())
        let timing = DeviceTiming.of(.nrf52833)
        b.write([0x00, 0x02])
        b.answers = []
        b.block(0x50000, data0, first: 0)
        b.run()
        let answer = try #require(b.answers.first)
        #expect(answer.bytes == Self.ok)
        // `put("flashIncomplete")` rewrites the store's page (one erase), then the block's page
        // is erased, then the 16 words are burnt.
        #expect(b.board.flashIncomplete)
        #expect(answer.at >= timing.eventDispatch + timing.pageErase * 2 + timing.blockWrite)
        // The next block of the same boot finds the key and only burns.
        b.answers = []
        let second = b.now
        b.block(0x50040, data1, first: 4)
        b.run()
        #expect(b.answers.map(\.bytes) == [Self.ok])
        #expect(b.answers.first.map { $0.at - second } == timing.eventDispatch + timing.blockWrite)
        #expect(try b.board.readFlash(0x50000..<0x50080) == data0 + data1)
    }

    @Test func queuedFlashEventsRunBackToBackAndEachReadsOffsetWhenItRuns() throws {
        var b = TimedBench(try board())
        b.write([0x00, 0x02])
        b.answers = []
        // The second block's packets arrive while the first event is still at the key-value write.
        b.block(0x50000, data0, first: 0)
        b.run(until: .milliseconds(2))
        b.block(0x50040, data1, first: 4)
        b.run()
        // Two answers, the second as soon as the first handler returned and the bus dispatched
        // the next event: both events burnt the buffer and the `offset` the second block left,
        // so the first block's bytes never reached the flash.
        #expect(b.answers.map(\.bytes) == [Self.ok, Self.ok])
        let timing = DeviceTiming.of(.nrf52833)
        #expect(b.answers[1].at - b.answers[0].at == timing.eventDispatch + timing.blockWrite)
        #expect(try b.board.readFlash(0x50040..<0x50080) == data1)
        #expect(try b.board.readFlash(0x50000..<0x50040) != data0)
    }

    @Test func packetsArrivingDuringTheEraseOverwriteTheBlockThatIsBurnt() throws {
        var b = TimedBench(try board())
        let timing = DeviceTiming.of(.nrf52833)
        b.write([0x00, 0x02])
        b.answers = []
        b.block(0x50000, data0, first: 0)
        // The work has read `offset` and is erasing 0x50000 when the next block's first two
        // packets overwrite the first half of the shared block buffer and `offset`.
        b.run(until: timing.eventDispatch + timing.pageErase + timing.pageErase / 2)
        let next = Fixture.packets(address: 0x50040, data: data1, first: 4)
        b.write(next[0])
        b.write(next[1])
        b.run()
        #expect(b.answers.map(\.bytes) == [Self.ok])
        // Burnt at the address read before the erase, with the buffer as it was at the burn.
        #expect(try b.board.readFlash(0x50000..<0x50040) == Array(data1[0..<32]) + Array(data0[32..<64]))
    }

    @Test func aFlashOperationThatNeverEndsStarvesTheBoardUntilFF01() throws {
        var b = TimedBench(try board())
        b.flashOperationError = 1
        b.write([0x00, 0x02])
        b.answers = []
        b.block(0x50000, data0, first: 0)
        b.block(0x50040, data1, first: 4)
        b.write([0xFF, 0x00])
        b.run(until: .seconds(600))
        #expect(b.answers.isEmpty && b.reboots == 0)
        #expect(b.board.flashWorkHangs)
        // The write handler still answers from the SoftDevice's interrupt.
        b.write([0xEE])
        #expect(b.answers.map(\.bytes) == [[0xEE, 0x01, 0x00]])
        b.write([0x00, 0x02])
        #expect(b.answers.count == 2)
        // FF 01 resets at once; the board boots with `flashIncomplete` into pairing mode.
        b.write([0xFF, 0x01])
        #expect(b.reboots == 1 && !b.board.flashWorkHangs && b.board.mode == .pairing)
    }

    @Test func buttonlessDFUOnAStarvedBoardDisconnectsAndNeverResets() throws {
        let image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 256)
        var board = try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV2), image: image)
        board.reset(holdingButtons: true)
        var b = TimedBench(board)
        b.flashOperationError = 1
        b.write([0x00, 0x02])
        b.block(0x47000, data0, first: 0)
        b.run()
        #expect(b.board.flashWorkHangs && b.board.isConnectable)
        b.answers = []
        b.write(ButtonlessMessage.enterBootloader.bytes, to: NordicGATT.buttonlessBonded)
        b.run(until: .seconds(600))
        // The indication goes out; the shutdown disconnects and stops advertising, then waits
        // for the idle fiber, which never runs.
        #expect(
            b.answers.map(\.bytes) == [
                ButtonlessMessage.response(opcode: 0x01, result: ButtonlessMessage.success).bytes
            ])
        #expect(b.disconnects == 1 && b.reboots == 0)
        #expect(!b.board.isConnectable)
        // A power cycle (a reset) is the way out.
        b.board.reset()
        #expect(!b.board.flashWorkHangs)
    }

    @Test func buttonlessDFUOnAHealthyBoardResetsIntoTheBootloader() throws {
        let image = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 256)
        var b = TimedBench(try SimulatedBoard(profile: SimulatedBoard.stockProfile(.microbitV2), image: image))
        b.write(ButtonlessMessage.enterBootloader.bytes, to: NordicGATT.buttonlessBonded)
        b.run()
        #expect(b.reboots == 1 && b.disconnects == 0)
        #expect(b.board.device.nordic.bootloaderActive)
    }
}
