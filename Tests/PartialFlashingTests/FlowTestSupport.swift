import PartialFlashingFrames
import TestSupport
import FirmwareImage
import Transport
@testable import PartialFlashing

/// Shared vocabulary of the state-machine tests: events, fixtures and action filters.
let pf = PartialFlashingGATT.characteristic
let link = ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 23, name: "BBC micro:bit [zotup]")

/// The runtime hash of a real CODAL build (meet-the-microbit) and two program hashes
/// in MakeCode's `h0 00 h1 00 …` shape.
let runtimeHash: [UInt8] = [0x22, 0x20, 0x4A, 0xC8, 0x74, 0x97, 0x7E, 0x7F]
let newProgramHash: [UInt8] = [0x1E, 0x00, 0x53, 0x00, 0x12, 0x00, 0xA2, 0x00]
let oldProgramHash: [UInt8] = [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00]

func notify(_ bytes: [UInt8]) -> FlowEvent { .notification(pf, bytes) }
let ack = notify([0x01, 0xFF])
let outOfOrder = notify([0x01, 0xAA])
/// The step's packet from a board that expects `expected` (`PartialFlashWriter.step(_:)`).
func stepPacket(expecting expected: UInt8) -> [UInt8] {
    [0x01, 0x00, 0x00, expected &+ 128] + [UInt8](repeating: 0xFF, count: 16)
}

/// A board's answers to `count` blocks numbered on from `first`: each block's `01 FF`, and the
/// `01 AA` of the step that keeps the numbers away from 252.
func blockAnswers(_ count: Int, from first: UInt8 = 0) -> [FlowEvent] {
    var events: [FlowEvent] = []
    var next = first
    for _ in 0..<count {
        events.append(ack)
        next &+= 4
        if next == 252 {
            events += [outOfOrder]
            next = 0
        }
    }
    return events
}

func status(_ mode: BoardMode) -> FlowEvent { notify(PartialFlashingNotification.status(version: 1, mode: mode).bytes) }

func region(_ id: UInt8, _ start: UInt32, _ end: UInt32, _ hash: [UInt8]) -> FlowEvent {
    notify(PartialFlashingNotification.regionInfo(RegionInfo(id: id, start: start, end: end, hash: hash)).bytes)
}

/// What a CODAL micro:bit V2 with the old program answers.
let v2Runtime = region(1, 0x1C000, 0x46B00, runtimeHash)
let v2Program = region(2, 0x47000, 0x73000, oldProgramHash)

/// The bytes of every write, in order.
func writes(_ actions: [FlowAction]) -> [[UInt8]] {
    actions.compactMap { if case let .write(c, bytes, .command) = $0, c == pf { return bytes } else { return nil } }
}

/// The actions that reach the link or the timers (reports left out).
func effects(_ actions: [FlowAction]) -> [FlowAction] {
    actions.filter { if case .report = $0 { return false } else { return true } }
}

func reports(_ actions: [FlowAction]) -> [FlowReport] {
    actions.compactMap { if case let .report(r) = $0 { return r } else { return nil } }
}

/// The typed reports of partial flashing among `actions`.
func partialReports(_ actions: [FlowAction]) -> [PartialFlashReport] {
    reports(actions).compactMap { if case let .flow(r) = $0 { r.value(as: PartialFlashReport.self) } else { nil } }
}

/// The typed reports of the writer among `actions`.
func writerReports(_ actions: [FlowAction]) -> [PartialFlashWriterReport] {
    reports(actions).compactMap {
        if case let .flow(r) = $0 { r.value(as: PartialFlashWriterReport.self) } else { nil }
    }
}

/// The packet numbers of the FLASH_DATA writes.
func packetNumbers(_ actions: [FlowAction]) -> [UInt8] {
    writes(actions).filter { $0.first == 0x01 && $0.count == 20 }.map { $0[3] }
}

/// A deterministic generator for seeded property tests.
typealias SeededRandom = SeededGenerator

/// A MakeCode-shaped program image: magic, runtime hash, program hash, then `bodySize`
/// pseudo-random bytes (no 0xFF, so no block is skipped), at `start`.
func makeProgram(
    at start: UInt32 = 0x47000, bodySize: Int = 4000, seed: UInt64 = 1,
    programHash: [UInt8] = newProgramHash
) -> (MemoryImage, MakeCodeProgram) {
    var rng = SeededRandom(seed: seed)
    let body = (0..<bodySize).map { _ in UInt8.random(in: 0...0xFE, using: &rng) }
    let bytes = MakeCodeProgram.magic + runtimeHash + programHash + body
    var image = MemoryImage()
    try? image.write(bytes, at: start)
    let end = start + UInt32(bytes.count)
    let padded = (end + 63) & ~63
    return (
        image,
        MakeCodeProgram(
            magicAddress: start, runtimeHash: runtimeHash, programHash: programHash,
            region: start..<padded)
    )
}

/// The plan of `makeProgram` for a V2 board whose region 2 is 0x47000-0x73000.
func makePlan(bodySize: Int = 4000, skip: Bool = true, seal: Bool = false) throws -> (BlockPlan, MakeCodeProgram) {
    let (image, program) = makeProgram(bodySize: bodySize)
    let plan = try BlockPlan(
        image: image, program: program,
        boardRegion: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash),
        family: .nrf52833, skipErasedBlocks: skip, sealProgramHash: seal)
    return (plan, program)
}

extension FlowMachine {
    /// Feeds events in order and returns every action, as a driver would see them.
    mutating func run(_ events: [FlowEvent], at now: Duration = .zero) -> [FlowAction] {
        events.flatMap { handle($0, now: now) }
    }

    /// The error the flow finished with, if it failed with a `PartialFlashError`.
    var partialFlashError: PartialFlashError? {
        guard case let .failure(e)? = outcome else { return nil }
        return e as? PartialFlashError
    }
}

/// The block address in the first FLASH_DATA packets of `actions`.
func firstBlockAddress(in actions: [FlowAction]) -> UInt32? {
    let packets = writes(actions).filter { $0.first == 0x01 && $0.count == 20 }
    guard packets.count >= 2 else { return nil }
    return UInt32(packets[0][1]) << 8 | UInt32(packets[0][2]) | UInt32(packets[1][1]) << 24 | UInt32(packets[1][2])
        << 16
}
