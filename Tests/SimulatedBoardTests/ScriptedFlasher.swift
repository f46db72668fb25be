import PartialFlashing
import Transport
import PartialFlashingFrames

/// A test client: a well-formed partial flash (STATUS, REGION_INFO 1 and 2, blocks each
/// waiting for `01 FF`, resending with +4 after `01 AA`, END_OF_TRANSMISSION), or with
/// `pipelined` every block at once without waiting, as a client must not do.
struct ScriptedFlasher: FlowMachine {
    struct Block: Sendable, Equatable {
        var address: UInt32
        var data: [UInt8]
    }

    struct Log: Sendable, Equatable {
        var status: [UInt8]? = nil
        var regions: [[UInt8]] = []
        /// When each `01 FF` arrived.
        var ackTimes: [Duration] = []
        var writeFails = 0
        var endSentAt: Duration? = nil
        var disconnect: DisconnectReason? = nil
    }

    struct Failure: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    enum State: Equatable { case idle, status, region1, region2, blocks, end, done }

    let blocks: [Block]
    var pipelined = false
    var timeout: Duration = .seconds(3)
    private(set) var log = Log()
    private(set) var outcome: Result<Log, any Error>? = nil
    private var state = State.idle
    private var index = 0
    private var packetNumber: UInt8 = 0
    private var acks = 0
    private let pf = PartialFlashingGATT.characteristic
    private let timer = TimerID("answer")

    init(blocks: [Block], pipelined: Bool = false) {
        self.blocks = blocks
        self.pipelined = pipelined
    }

    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start:
            state = .status
            return [.subscribe(pf), .write(pf, [0xEE], .command), .startTimer(timer, timeout)]
        case let .notification(_, bytes):
            return notification(bytes, now: now)
        case .timerFired:
            return fail("no answer in state \(state)")
        case let .disconnected(reason):
            guard state == .end else { return fail("disconnected in state \(state): \(reason)") }
            log.disconnect = reason
            state = .done
            outcome = .success(log)
            return [.cancelTimer(timer), .finish]
        case let .writeFailed(_, e):
            return fail("write failed: \(e)")
        case .connected, .connectFailed:
            return []
        }
    }

    private mutating func notification(_ bytes: [UInt8], now: Duration) -> [FlowAction] {
        let restart = FlowAction.startTimer(timer, timeout)
        switch state {
        case .status:
            log.status = bytes
            state = .region1
            return [.write(pf, [0x00, 0x01], .command), restart]
        case .region1:
            log.regions.append(bytes)
            state = .region2
            return [.write(pf, [0x00, 0x02], .command), restart]
        case .region2:
            log.regions.append(bytes)
            packetNumber = 0
            guard !blocks.isEmpty else { return end(now) }
            state = .blocks
            if pipelined { return blocks.indices.flatMap { send($0) } + [restart] }
            return send(0) + [restart]
        case .blocks:
            if bytes == [0x01, 0xFF] {
                log.ackTimes.append(now)
                acks += 1
                if pipelined { return acks == blocks.count ? end(now) : [restart] }
                index += 1
                return index == blocks.count ? end(now) : send(index) + [restart]
            }
            if bytes == [0x01, 0xAA] {
                log.writeFails += 1
                return pipelined ? [restart] : send(index) + [restart]
            }
            return [restart]
        default:
            return []
        }
    }

    private mutating func send(_ i: Int) -> [FlowAction] {
        let b = blocks[i]
        let packets = Fixture.packets(address: b.address, data: b.data, first: packetNumber)
        packetNumber &+= 4
        return packets.map { .write(pf, $0, .command) }
    }

    private mutating func end(_ now: Duration) -> [FlowAction] {
        state = .end
        log.endSentAt = now
        return [.write(pf, [0x02], .command), .startTimer(timer, timeout)]
    }

    private mutating func fail(_ why: String) -> [FlowAction] {
        state = .done
        outcome = .failure(Failure(description: why))
        return [.finish]
    }
}
