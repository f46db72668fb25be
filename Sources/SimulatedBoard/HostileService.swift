import FirmwareImage
import LinkModel
import PartialFlashingFrames
import Transport

/// A way a hostile (buggy or malicious) board lies to the central.
public enum HostileKind: String, Sendable, Equatable, Codable, CaseIterable {
    /// REGION_INFO 2 answers a region that starts and ends outside the chip's flash.
    case regionOutsideFlash = "region-outside-flash"
    /// REGION_INFO 2 answers a start one page further on every other read.
    case movingRegion = "moving-region"
    /// `01 FF` acknowledgements for blocks never sent (after every write, whatever it was).
    case phantomAcks = "phantom-acks"
    /// Every partial-flashing notification carries 40 extra bytes.
    case oversizedNotifications = "oversized-notifications"
    /// Every partial-flashing notification loses its last byte.
    case truncatedNotifications = "truncated-notifications"
    /// SMP responses carry a sequence number one higher than the request's.
    case wrongSequence = "wrong-sequence"
    /// SMP response headers claim a 65,535-byte body.
    case hugeLength = "huge-length"
    /// SMP responses report slot hashes with a flipped byte.
    case wrongSlotHash = "wrong-slot-hash"
    /// The link delivers some notifications twice. Impossible on a BLE link
    /// (`FaultPlan.duplicateNotification`); the campaign injects it on the link, not in the board.
    case duplicatedNotifications = "duplicated-notifications"
    /// The link lets some notifications overtake the next. Impossible on a BLE link
    /// (`FaultPlan.reorderNotification`); the campaign injects it on the link, not in the board.
    case reorderedNotifications = "reordered-notifications"

    /// True for lies of the SMP server.
    public var isSMP: Bool { [.wrongSequence, .hugeLength, .wrongSlotHash].contains(self) }
    /// True for faults of the link rather than lies of the board; `makeHostile` leaves the board as it is.
    public var isLinkFault: Bool { [.duplicatedNotifications, .reorderedNotifications].contains(self) }
    /// The lies of a board's firmware (everything but the link faults).
    public static var firmwareKinds: [HostileKind] { allCases.filter { !$0.isLinkFault } }
}

/// A service wrapper that lies: it lets the honest service do its work (so the flash changes
/// exactly as the honest board's would) and rewrites the notifications it sends.
public struct HostileService: SimulatedService {
    public private(set) var inner: any SimulatedService
    public let kind: HostileKind
    private var regionReads = 0
    /// Bytes still to come of the SMP response frame being notified.
    private var frameRemaining = 0
    private let flashSize: UInt32
    private let pageSize: UInt32

    public init(wrapping inner: any SimulatedService, kind: HostileKind, layout: MemoryLayout) {
        self.inner = inner
        self.kind = kind
        flashSize = layout.flashSize
        pageSize = layout.pageSize
    }

    public var uuid: BLEUUID { inner.uuid }
    public var characteristics: Set<GATTCharacteristic> { inner.characteristics }

    public mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind writeKind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects
    ) {
        let first = effects.notifications.count
        inner.didWrite(bytes, to: characteristic, kind: writeKind, device: &device, effects: &effects)
        if kind == .phantomAcks, characteristic == PartialFlashingGATT.characteristic {
            effects.notify(PartialFlashingGATT.characteristic, PartialFlashingNotification.writeSuccess.bytes)
        }
        lie(effects: &effects, from: first)
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
        let first = effects.notifications.count
        inner.workDone(tag: tag, device: &device, effects: &effects)
        lie(effects: &effects, from: first)
    }

    public mutating func didBoot(device: DeviceState) {
        frameRemaining = 0
        inner.didBoot(device: device)
    }

    public mutating func didDisconnect() {
        frameRemaining = 0
        inner.didDisconnect()
    }

    public mutating func runBootloader(device: inout DeviceState) { inner.runBootloader(device: &device) }

    public func bootloaderTime(device: DeviceState, timing: DeviceTiming) -> Duration {
        inner.bootloaderTime(device: device, timing: timing)
    }

    public func isOffered(device: DeviceState) -> Bool { inner.isOffered(device: device) }
    public func offers(_ characteristic: GATTCharacteristic, device: DeviceState) -> Bool {
        inner.offers(characteristic, device: device)
    }

    private mutating func lie(effects: inout ServiceEffects, from first: Int) {
        effects.rewriteNotifications(from: first) { n in
            var out = n
            out.bytes = kind.isSMP ? smpLie(n.bytes) : partialLie(n.bytes)
            return [out]
        }
    }

    private mutating func partialLie(_ bytes: [UInt8]) -> [UInt8] {
        switch kind {
        case .oversizedNotifications: return bytes + [UInt8](repeating: 0x5A, count: 40)
        case .truncatedNotifications: return Array(bytes.dropLast())
        case .regionOutsideFlash, .movingRegion:
            guard bytes.count == 18, bytes[0] == 0x00, bytes[1] == 2 else { return bytes }
            regionReads += 1
            var start = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
            var end = UInt32(bytes[6]) << 24 | UInt32(bytes[7]) << 16 | UInt32(bytes[8]) << 8 | UInt32(bytes[9])
            if kind == .regionOutsideFlash {
                start = flashSize + pageSize
                end = flashSize + 16 * pageSize
            } else if regionReads % 2 == 0 {
                start &+= pageSize
            }
            func be(_ v: UInt32) -> [UInt8] {
                [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
            }
            return [0x00, 2] + be(start) + be(end) + Array(bytes[10...])
        default: return bytes
        }
    }

    /// SMP responses go out as consecutive notifications of one frame; the first carries the header.
    private mutating func smpLie(_ bytes: [UInt8]) -> [UInt8] {
        guard frameRemaining == 0 else {
            frameRemaining = max(0, frameRemaining - bytes.count)
            return kind == .wrongSlotHash ? flipHashes(bytes) : bytes
        }
        guard bytes.count >= 8 else { return bytes }
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        frameRemaining = max(0, 8 + length - bytes.count)
        var out = bytes
        switch kind {
        case .wrongSequence: out[6] &+= 1
        case .hugeLength: out[2] = 0xFF; out[3] = 0xFF
        case .wrongSlotHash: out = flipHashes(out)
        default: break
        }
        return out
    }

    /// Flips the first byte of every 32-byte CBOR byte string (`58 20 …`): the slots' hashes.
    private func flipHashes(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var i = 0
        while i + 2 < out.count {
            if out[i] == 0x58, out[i + 1] == 0x20 { out[i + 2] ^= 0xFF; i += 34 } else { i += 1 }
        }
        return out
    }
}

extension SimulatedBoard {
    /// Makes the board lie in the way `kind` says (wrapping its partial-flashing service or
    /// its SMP server). A board without that service, or a link fault, leaves it as it is.
    public mutating func makeHostile(_ kind: HostileKind) {
        guard !kind.isLinkFault else { return }
        for i in services.indices {
            let wanted = kind.isSMP ? services[i] is SMPServer : services[i] is PartialFlashingService
            if wanted { services[i] = HostileService(wrapping: services[i], kind: kind, layout: profile.layout) }
        }
    }

    /// Stops every lie: the honest services take over, with their state.
    public mutating func makeHonest() {
        for i in services.indices {
            if let hostile = services[i] as? HostileService { services[i] = hostile.inner }
        }
    }
}
