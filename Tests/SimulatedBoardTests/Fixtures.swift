import FirmwareImage
import LinkModel
import PartialFlashing
import PartialFlashingFrames
import Transport
@testable import SimulatedBoard

/// Images built by the tests: a runtime, zeros up to a page-aligned MakeCode program with
/// its magic and hashes, and a program body (docs/protocols/partial-flashing.md §5.1-5.2).
enum Fixture {
    static let runtimeHash: [UInt8] = [0x22, 0x20, 0x4A, 0xC8, 0x74, 0x97, 0x7E, 0x7F]
    static let programHash: [UInt8] = [0x1E, 0x00, 0x53, 0x00, 0x12, 0x00, 0xA2, 0x00]

    /// Bytes that are never 0x00 or 0xFF.
    static func pattern(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(((($0 &* 7) &+ seed) % 251) | 1) }
    }

    /// A board image with the program magic at `magicAt` and `programLength` program bytes
    /// (header included). The runtime ends 0x123 bytes into the page before the magic.
    static func image(
        family: ChipFamily, magicAt: UInt32, programLength: Int, seed: Int = 3,
        programHash: [UInt8] = programHash
    ) -> MemoryImage {
        let layout = family.layout
        var image = MemoryImage()
        let runtimeEnd = magicAt - layout.pageSize + 0x123
        try? image.write(pattern(Int(runtimeEnd - layout.applicationStart), seed: 11), at: layout.applicationStart)
        try? image.write([UInt8](repeating: 0, count: Int(magicAt - runtimeEnd)), at: runtimeEnd)
        let body = pattern(max(programLength - 32, 0), seed: seed)
        try? image.write(MakeCodeProgram.magic + runtimeHash + programHash + body, at: magicAt)
        return image
    }

    /// The 64-byte blocks of `image` from `start` to its end, padded with 0xFF.
    static func blocks(of image: MemoryImage, from start: UInt32) -> [ScriptedFlasher.Block] {
        guard let end = image.span?.upperBound, end > start else { return [] }
        return stride(from: start, to: end, by: 64).map {
            ScriptedFlasher.Block(address: $0, data: image.read($0..<($0 + 64)))
        }
    }

    /// The four FLASH_DATA packets of a block, numbered from `first`.
    static func packets(address: UInt32, data: [UInt8], first: UInt8) -> [[UInt8]] {
        (0..<4).map { i in
            let field: UInt16 = i == 0 ? UInt16(address & 0xFFFF) : i == 1 ? UInt16(address >> 16) : 0
            return PartialFlashingRequest.flashData(
                offsetField: field, packetNumber: first &+ UInt8(i),
                data: Array(data[(16 * i)..<(16 * i + 16)])
            ).bytes
        }
    }
}

/// Drives a board's partial-flashing service directly, without the link: writes go straight
/// to the write handler and `settle()` runs the device work in order.
struct Bench {
    var board: SimulatedBoard
    var notifications: [[UInt8]] = []
    var work: [Int] = []
    var reboots = 0

    init(_ board: SimulatedBoard) { self.board = board }

    init(family: ChipFamily, image: MemoryImage = MemoryImage(), mode: BoardMode = .pairing) throws {
        let b: Board = family == .nrf51 ? .microbitV1 : .microbitV2
        board = try SimulatedBoard(profile: BoardProfile(board: b), image: image, mode: mode)
        board.reset(holdingButtons: mode == .pairing)
    }

    mutating func write(_ bytes: [UInt8]) {
        var fx = effects()
        _ = board.write(bytes, to: PartialFlashingGATT.characteristic, kind: .command, effects: &fx)
        absorb(fx)
    }

    mutating func settle() {
        while !work.isEmpty {
            let tag = work.removeFirst()
            var fx = effects()
            board.workDone(service: 0, tag: tag, effects: &fx)
            absorb(fx)
        }
    }

    /// Sends a whole block and lets the board write it.
    mutating func block(_ address: UInt32, _ data: [UInt8], first: UInt8) {
        for p in Fixture.packets(address: address, data: data, first: first) { write(p) }
        settle()
    }

    /// Takes the notifications seen so far.
    mutating func take() -> [[UInt8]] {
        defer { notifications = [] }
        return notifications
    }

    private func effects() -> ServiceEffects {
        ServiceEffects(
            now: .zero, timing: DeviceTiming.of(board.profile.family), rng: SplitMix64(seed: 1),
            slowErase: 0, slowEraseFactor: 1)
    }

    private mutating func absorb(_ fx: ServiceEffects) {
        notifications += fx.notifications.map(\.bytes)
        work += fx.work.map(\.tag)
        if fx.rebootRequested {
            reboots += 1
            work = []
            board.reset()
        }
    }
}
