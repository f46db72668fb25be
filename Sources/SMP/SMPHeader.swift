// The SMP module: McuMgr Simple Management Protocol frames over CBOR, no I/O.
//
// `SMPHeader` is the 8-byte header, `SMPFrame` a header plus CBOR payload,
// the group files hold the typed requests and responses, `SMPReassembler`
// cuts frames out of a notification stream, and `SMPError` says what went wrong.
import Diagnostics

/// The SMP protocol version, bits 4…3 of the first header byte.
public struct SMPVersion: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// 0…3; 2 and 3 are reserved but still decoded, so a server can refuse them politely.
    public let rawValue: UInt8
    public init?(rawValue: UInt8) {
        guard rawValue <= 3 else { return nil }
        self.rawValue = rawValue
    }
    private init(_ raw: UInt8) { rawValue = raw }

    /// SMP version 1 (legacy): errors are `{"rc": n}`.
    public static let v1 = SMPVersion(0)
    /// SMP version 2: group errors are `{"err": {"group": g, "rc": n}}`.
    public static let v2 = SMPVersion(1)

    public var description: String { rawValue <= 1 ? "v\(rawValue + 1)" : "reserved version \(rawValue)" }
}

/// The operation, bits 2…0 of the first header byte.
public enum SMPOperation: UInt8, Sendable, Hashable, CaseIterable {
    case read = 0
    case readResponse = 1
    case write = 2
    case writeResponse = 3

    /// True for `readResponse` and `writeResponse`.
    public var isResponse: Bool { self == .readResponse || self == .writeResponse }

    /// The operation of the answer to this request operation (Zephyr `smp_make_rsp_hdr`).
    public var response: SMPOperation { self == .read || self == .readResponse ? .readResponse : .writeResponse }
}

/// A management group id. Known groups have names; any 16-bit id is allowed.
public struct SMPGroup: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let os = SMPGroup(rawValue: 0)
    public static let image = SMPGroup(rawValue: 1)
    public static let statistics = SMPGroup(rawValue: 2)
    public static let settings = SMPGroup(rawValue: 3)
    public static let log = SMPGroup(rawValue: 4)
    public static let fileSystem = SMPGroup(rawValue: 8)
    public static let shell = SMPGroup(rawValue: 9)
    public static let zephyrBasic = SMPGroup(rawValue: 63)

    public var description: String {
        switch rawValue {
        case 0: return "OS group (0)"
        case 1: return "image group (1)"
        case 2: return "statistics group (2)"
        case 3: return "settings group (3)"
        case 4: return "log group (4)"
        case 8: return "file-system group (8)"
        case 9: return "shell group (9)"
        case 63: return "Zephyr basic group (63)"
        default: return "group \(rawValue)"
        }
    }
}

/// The 8-byte SMP header; multi-byte fields are big-endian.
///
/// ```
/// byte 0: reserved(3) version(2) op(3) | 1: flags | 2-3: payload length
/// 4-5: group | 6: sequence | 7: command
/// ```
public struct SMPHeader: Sendable, Hashable, CustomStringConvertible {
    /// Size of the encoded header.
    public static let size = 8

    public var version: SMPVersion
    public var operation: SMPOperation
    /// No flags are defined; send 0.
    public var flags: UInt8
    /// Length of the CBOR payload that follows (the header is not counted).
    public var length: UInt16
    public var group: SMPGroup
    /// Echoed by the server in its response.
    public var sequence: UInt8
    /// The command id within the group.
    public var command: UInt8

    public init(
        version: SMPVersion = .v2, operation: SMPOperation, flags: UInt8 = 0, length: UInt16,
        group: SMPGroup, sequence: UInt8, command: UInt8
    ) {
        self.version = version
        self.operation = operation
        self.flags = flags
        self.length = length
        self.group = group
        self.sequence = sequence
        self.command = command
    }

    /// The encoding of the header.
    public var bytes: [UInt8] {
        [
            version.rawValue << 3 | operation.rawValue, flags,
            UInt8(length >> 8), UInt8(length & 0xFF),
            UInt8(group.rawValue >> 8), UInt8(group.rawValue & 0xFF),
            sequence, command
        ]
    }

    /// Decodes the first 8 bytes of `bytes` (anything after them is ignored).
    public init(bytes: some Collection<UInt8>) throws(SMPError) {
        let b = Array(bytes.prefix(Self.size))
        guard b.count == Self.size else { throw .truncatedHeader(available: b.count) }
        guard b[0] & 0xE0 == 0 else {
            throw .malformedHeader("reserved bits of byte 0 are set (\(Hex.number(b[0], uppercase: false)))")
        }
        guard let operation = SMPOperation(rawValue: b[0] & 0x07) else {
            throw .malformedHeader(
                "operation \(b[0] & 0x07) is not one of read (0), read response (1), write (2), write response (3)")
        }
        self.version = SMPVersion(rawValue: (b[0] >> 3) & 0x03) ?? .v1
        self.operation = operation
        self.flags = b[1]
        self.length = UInt16(b[2]) << 8 | UInt16(b[3])
        self.group = SMPGroup(rawValue: UInt16(b[4]) << 8 | UInt16(b[5]))
        self.sequence = b[6]
        self.command = b[7]
    }

    public var description: String {
        "SMP \(version) \(operation) \(group) command \(command) seq \(sequence) length \(length)"
    }
}
