import FirmwareImage
import PartialFlashing
import PartialFlashingFrames
import SampleFirmware
import Transport
import FuzzEvents

/// The file being flashed: a small MakeCode sample (heart, 81 blocks) on a micro:bit V2.
let family = ChipFamily.nrf52833
let image = SampleFirmware.image(family: family, runtime: .r1, program: .heart)
let program = MakeCodeProgram.find(in: image, family: family)!
let knownTimers = [
    PartialFlashTimer.answer, PartialFlashTimer.block, PartialFlashTimer.reboot,
    PartialFlashTimer.deadline, PartialFlashTimer.restartWindow, TimerID("stranger")
]
let services: Set<BLEUUID> = [PartialFlashingGATT.service]

/// libFuzzer entry point: the input is a script of link events for `PartialFlashFlow`.
///
/// Each step takes one byte: its low 3 bits pick the event (a raw notification, an answer a
/// real board could give to the last request, a timer firing, a disconnect, connected,
/// connect failed, a write failure, or time passing). After every step the harness checks:
/// * every FLASH_DATA block written (packets 0/1 carry the address) is one of the plan's
///   blocks, with the plan's bytes;
/// * END_OF_TRANSMISSION (`02`) is written only after the flow has sent every planned block
///   at least once and at least as many `01 FF` as blocks were delivered since the plan
///   existed (the flow's own notion of acknowledgement; the harness cannot know which
///   block an answer belongs to);
/// * `finish` comes once and last; after the script, a driver that only fires timers and
///   fails reconnections ends the flow within 2,000 events (no livelock).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPartialFlow(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var source = ByteSource(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    // The sessions' settings (the hash written last) unless the first byte's top bit asks for the
    // program hash to be written in place; the connection interval when reported.
    let setup = source.byte()
    let settings = setup & 0x80 == 0 ? PartialFlashSettings() : PartialFlashSettings(sealProgramHash: false)
    let interval: Duration? = [nil, .microseconds(7_500), .milliseconds(15), .milliseconds(30)][Int(setup & 3)]
    var flow = PartialFlashFlow(image: image, program: program, family: family, settings: settings)
    var check = Checker()
    var book = DriverBook()
    let mtu = 23 + Int(source.byte() % 4) * 40
    let info = ConnectionInfo(services: source.byte() == 0xFF ? [] : services, mtu: mtu, connectionInterval: interval)
    var actions = flow.handle(.start(info), now: book.now)
    book.record(actions)
    check.observe(actions, flow: flow)

    var steps = 0
    while !source.isAtEnd, !book.finished, steps < 4096 {
        steps += 1
        let op = source.byte()
        let event: FlowEvent
        switch op & 7 {
        case 0: event = .notification(PartialFlashingGATT.characteristic, source.bytes(upTo: 24))
        case 1:
            event = .notification(PartialFlashingGATT.characteristic, check.answer(variant: source.byte(), to: flow))
        case 2: event = .timerFired(book.takeTimer(source.byte(), known: knownTimers))
        case 3:
            book.tookDisconnect()
            event = .disconnected([.remoteTerminated, .localTerminated, .supervisionTimeout][Int(op >> 3) % 3])
        case 4:
            book.tookConnect()
            event = .connected(op & 0x80 == 0 ? info : ConnectionInfo(services: [], mtu: 23))
        case 5:
            book.tookConnect()
            event = .connectFailed(.connectFailed("fuzz"))
        case 6: event = .writeFailed(PartialFlashingGATT.characteristic, .notConnected(operation: "write"))
        default:
            book.advance(source.byte())
            continue
        }
        if case .notification(_, [0x01, 0xFF]) = event, flow.plan != nil { check.acks += 1 }
        actions = flow.handle(event, now: book.now)
        book.record(actions)
        check.observe(actions, flow: flow)
    }

    var drained = 0
    while !book.finished {
        guard let event = book.drainEvent() else {
            fatalError("the flow waits forever: no timer running, no link request, not finished")
        }
        drained += 1
        precondition(drained <= 2000, "the flow did not finish within 2000 timer firings / failed connects")
        actions = flow.handle(event, now: book.now)
        book.record(actions)
        check.observe(actions, flow: flow)
    }
    precondition(flow.outcome != nil, "finish without an outcome")
    return 0
}

/// Watches the writes of one run.
struct Checker {
    var acks = 0
    var sentBlocks: Set<UInt32> = []
    var lastRequest: [UInt8] = []
    var packets: [[UInt8]] = []

    mutating func observe(_ actions: [FlowAction], flow: PartialFlashFlow) {
        for case let .write(characteristic, bytes, _) in actions
        where characteristic == PartialFlashingGATT.characteristic {
            lastRequest = bytes
            switch bytes.first {
            case 0x01: flashData(bytes, plan: flow.plan)
            case 0x02:
                guard let plan = flow.plan else { fatalError("END_OF_TRANSMISSION without a plan") }
                precondition(
                    sentBlocks.count == plan.blockCount,
                    "EOT after \(sentBlocks.count) of \(plan.blockCount) blocks were sent")
                precondition(acks >= plan.blockCount, "EOT after \(acks) write successes for \(plan.blockCount) blocks")
            default: break
            }
        }
    }

    /// Collects packets; every fourth completes a block, which must be in the plan.
    private mutating func flashData(_ bytes: [UInt8], plan: BlockPlan?) {
        guard let plan else { fatalError("FLASH_DATA before a plan") }
        precondition(bytes.count == 20, "FLASH_DATA of \(bytes.count) bytes")
        if let previous = packets.last, bytes[3] != previous[3] &+ 1 { packets = [] }
        packets.append(bytes)
        guard packets.count == 4 else { return }
        let address =
            UInt32(packets[1][1]) << 24 | UInt32(packets[1][2]) << 16
            | UInt32(packets[0][1]) << 8 | UInt32(packets[0][2])
        let data = packets.flatMap { $0[4...] }
        packets = []
        guard let block = plan.blocks.first(where: { $0.address == address }) else {
            fatalError("a block written at 0x\(String(address, radix: 16)), outside the plan")
        }
        precondition(block.data == data, "block 0x\(String(address, radix: 16)) written with other bytes")
        sentBlocks.insert(address)
    }

    /// What a board could answer to the last request; `variant` bends it a little.
    func answer(variant: UInt8, to flow: PartialFlashFlow) -> [UInt8] {
        switch lastRequest.first {
        case 0xEE: return [0xEE, variant & 0x10 == 0 ? 1 : 2, variant & 0x20 == 0 ? 1 : 0]
        case 0x00 where lastRequest.count == 2:
            let id = lastRequest[1]
            let hash: [UInt8]
            let start: UInt32, end: UInt32
            switch id {
            case 1:
                (start, end, hash) = (0x1C000, program.magicAddress, program.runtimeHash)
            case 2:
                let programHash = variant & 0x40 == 0 ? program.programHash.map { $0 ^ 0x5A } : program.programHash
                (start, end, hash) = (program.magicAddress, family.layout.scratchPage, programHash)
            default:
                (start, end, hash) = (0, 0x1C000, [1, 2, 3, 4, 5, 6, 7, 8])
            }
            let bent = variant & 0x08 == 0 ? start : start &+ UInt32(variant)
            return PartialFlashingNotification.regionInfo(RegionInfo(id: id, start: bent, end: end, hash: hash)).bytes
        case 0x01, 0x02: return variant & 0x04 == 0 ? [0x01, 0xFF] : [0x01, 0xAA]
        default: return [0x01, variant]
        }
    }
}
