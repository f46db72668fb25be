import Diagnostics

/// The frames of the micro:bit / Calliope partial-flashing service
/// (docs/protocols/partial-flashing.md §2). Every frame has one encoder (`bytes`) and
/// one decoder (`init(bytes:)`). Multi-byte fields are big-endian.

/// Why a frame could not be decoded.
public enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case unknownType(UInt8)
    case badLength(type: UInt8, expected: Int, got: Int)
    case badValue(String)

    public var description: String {
        switch self {
        case .empty: return "empty partial-flashing frame"
        case let .unknownType(t): return "unknown partial-flashing frame type \(Hex.number(t))"
        case let .badLength(t, e, g): return "partial-flashing frame \(Hex.number(t)) has \(g) bytes, expected \(e)"
        case let .badValue(s): return "bad partial-flashing frame: \(s)"
        }
    }
}

/// The mode byte of a STATUS answer.
public enum BoardMode: UInt8, Sendable, Equatable, Codable {
    /// Pairing ("Bluetooth") mode: the runtime is idle and flashing is safe.
    case pairing = 0x00
    /// The user's program is running.
    case application = 0x01
}

/// The mode byte of a RESET request.
public enum ResetMode: UInt8, Sendable, Equatable {
    /// Reboot into pairing mode (`FF 00`).
    case pairing = 0x00
    /// Reboot into the application (`FF 01`).
    case application = 0x01
}

/// Client to board: a write to the partial-flashing characteristic.
public enum PartialFlashingRequest: Sendable, Equatable {
    /// `00 id`: ask for region `id` (0 SoftDevice, 1 runtime, 2 program). Also resets
    /// the board's packet counters.
    case regionInfo(UInt8)
    /// `01 hi lo n data[16]`: one packet of a 4-packet block.
    case flashData(offsetField: UInt16, packetNumber: UInt8, data: [UInt8])
    /// `02`: the last block is acknowledged; finish and reboot.
    case endOfTransmission
    /// `EE`: ask for the protocol version and the board's mode.
    case status
    /// `FF mode`: reboot.
    case reset(ResetMode)

    public var bytes: [UInt8] {
        switch self {
        case let .regionInfo(id): return [0x00, id]
        case let .flashData(offset, n, data):
            precondition(data.count == 16, "a FLASH_DATA packet carries exactly 16 bytes")
            return [0x01, UInt8(offset >> 8), UInt8(offset & 0xFF), n] + data
        case .endOfTransmission: return [0x02]
        case .status: return [0xEE]
        case let .reset(mode): return [0xFF, mode.rawValue]
        }
    }

    public init(bytes: [UInt8]) throws {
        guard let type = bytes.first else { throw FrameError.empty }
        switch type {
        case 0x00:
            guard bytes.count == 2 else { throw FrameError.badLength(type: type, expected: 2, got: bytes.count) }
            self = .regionInfo(bytes[1])
        case 0x01:
            guard bytes.count == 20 else { throw FrameError.badLength(type: type, expected: 20, got: bytes.count) }
            self = .flashData(
                offsetField: UInt16(bytes[1]) << 8 | UInt16(bytes[2]), packetNumber: bytes[3],
                data: Array(bytes[4..<20]))
        case 0x02:
            guard bytes.count == 1 else { throw FrameError.badLength(type: type, expected: 1, got: bytes.count) }
            self = .endOfTransmission
        case 0xEE:
            guard bytes.count == 1 else { throw FrameError.badLength(type: type, expected: 1, got: bytes.count) }
            self = .status
        case 0xFF:
            guard bytes.count == 2 else { throw FrameError.badLength(type: type, expected: 2, got: bytes.count) }
            guard let mode = ResetMode(rawValue: bytes[1]) else { throw FrameError.badValue("reset mode \(bytes[1])") }
            self = .reset(mode)
        default:
            throw FrameError.unknownType(type)
        }
    }
}

/// One region of the board's memory map, as REGION_INFO reports it.
public struct RegionInfo: Sendable, Equatable {
    public var id: UInt8
    public var start: UInt32
    /// Exclusive on CODAL; DAL reports 0x3BBFF for region 2 (§2.1).
    public var end: UInt32
    /// 8 bytes, verbatim from flash.
    public var hash: [UInt8]
    public init(id: UInt8, start: UInt32, end: UInt32, hash: [UInt8]) {
        self.id = id
        self.start = start
        self.end = end
        self.hash = hash
    }
}

/// Board to client: a notification on the partial-flashing characteristic.
public enum PartialFlashingNotification: Sendable, Equatable {
    case regionInfo(RegionInfo)
    /// `01 FF`: the block was written.
    case writeSuccess
    /// `01 AA`: packet out of order; the block was dropped and the board now expects start+4.
    case writeFail
    /// `EE version mode`.
    case status(version: UInt8, mode: BoardMode)

    public var bytes: [UInt8] {
        switch self {
        case let .regionInfo(r):
            precondition(r.hash.count == 8, "a region hash has 8 bytes")
            return [0x00, r.id] + r.start.bigEndianBytes + r.end.bigEndianBytes + r.hash
        case .writeSuccess: return [0x01, 0xFF]
        case .writeFail: return [0x01, 0xAA]
        case let .status(version, mode): return [0xEE, version, mode.rawValue]
        }
    }

    public init(bytes: [UInt8]) throws {
        guard let type = bytes.first else { throw FrameError.empty }
        switch type {
        case 0x00:
            guard bytes.count == 18 else { throw FrameError.badLength(type: type, expected: 18, got: bytes.count) }
            self = .regionInfo(
                RegionInfo(
                    id: bytes[1], start: UInt32(bigEndianBytes: bytes[2..<6]),
                    end: UInt32(bigEndianBytes: bytes[6..<10]), hash: Array(bytes[10..<18])))
        case 0x01:
            guard bytes.count == 2 else { throw FrameError.badLength(type: type, expected: 2, got: bytes.count) }
            switch bytes[1] {
            case 0xFF: self = .writeSuccess
            case 0xAA: self = .writeFail
            default: throw FrameError.badValue("write status \(Hex.number(bytes[1], uppercase: false))")
            }
        case 0xEE:
            guard bytes.count == 3 else { throw FrameError.badLength(type: type, expected: 3, got: bytes.count) }
            guard let mode = BoardMode(rawValue: bytes[2]) else { throw FrameError.badValue("board mode \(bytes[2])") }
            self = .status(version: bytes[1], mode: mode)
        default:
            throw FrameError.unknownType(type)
        }
    }
}

extension UInt32 {
    var bigEndianBytes: [UInt8] {
        [UInt8(self >> 24), UInt8(self >> 16 & 0xFF), UInt8(self >> 8 & 0xFF), UInt8(self & 0xFF)]
    }
    init(bigEndianBytes b: ArraySlice<UInt8>) {
        self = b.reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension FrameError: DomainError {
    public var failureKind: FailureKind { .flashFailed }
}
