import Diagnostics
import FirmwareImage

/// A request written to the legacy DFU control point (docs/protocols/nordic-dfu.md §3.3).
public enum LegacyDFURequest: Sendable, Equatable {
    /// `01 mode`: mode 0x04 = application.
    case start(mode: UInt8)
    /// `02 00` (start) or `02 01` (complete).
    case initParameters(complete: Bool)
    /// `03`: firmware follows on the packet characteristic.
    case receiveFirmware
    /// `04`.
    case validate
    /// `05`: activate the image and reset (no answer).
    case activateAndReset
    /// `06`: reset (no answer).
    case reset
    /// `07`.
    case reportSize
    /// `08 n:u16`: a receipt after every `n` packets (0: none).
    case packetReceiptRequest(UInt16)
    case other(opcode: UInt8, parameters: [UInt8])

    /// The start mode for an application.
    public static let applicationMode: UInt8 = 0x04

    public var opcode: UInt8 { bytes[0] }

    public var bytes: [UInt8] {
        switch self {
        case let .start(mode): return [0x01, mode]
        case let .initParameters(complete): return [0x02, complete ? 0x01 : 0x00]
        case .receiveFirmware: return [0x03]
        case .validate: return [0x04]
        case .activateAndReset: return [0x05]
        case .reset: return [0x06]
        case .reportSize: return [0x07]
        case let .packetReceiptRequest(n): return [0x08] + LEBytes.bytes(n)
        case let .other(op, p): return [op] + p
        }
    }

    public init(bytes: [UInt8]) throws {
        guard let op = bytes.first else { throw NordicDFUError.malformedFrame("an empty control point write") }
        func need(_ n: Int) throws {
            guard bytes.count >= n else {
                throw NordicDFUError.malformedFrame(
                    "legacy DFU request 0x\(Hex.number(op, digits: 2, prefix: false)) of \(bytes.count) bytes (expected \(n))"
                )
            }
        }
        switch op {
        case 0x01: try need(2); self = .start(mode: bytes[1])
        case 0x02: try need(2); self = .initParameters(complete: bytes[1] == 0x01)
        case 0x03: self = .receiveFirmware
        case 0x04: self = .validate
        case 0x05: self = .activateAndReset
        case 0x06: self = .reset
        case 0x07: self = .reportSize
        case 0x08: try need(3); self = try .packetReceiptRequest(LEBytes.u16(bytes, 1))
        default: self = .other(opcode: op, parameters: Array(bytes.dropFirst()))
        }
    }
}

/// Status codes of legacy DFU responses.
public enum LegacyDFUStatus: UInt8, Sendable, Equatable, CaseIterable {
    case success = 0x01, invalidState = 0x02, notSupported = 0x03, dataSize = 0x04, crcError = 0x05, operationFailed =
        0x06

    var words: String {
        switch self {
        case .success: return "success"
        case .invalidState: return "invalid state"
        case .notSupported: return "not supported"
        case .dataSize: return "data size exceeds the limit"
        case .crcError: return "CRC error"
        case .operationFailed: return "operation failed"
        }
    }
}

/// A legacy DFU control point notification.
public enum LegacyDFUNotification: Sendable, Equatable {
    /// `10 op status`.
    case response(opcode: UInt8, status: UInt8)
    /// `10 07 01 size:u32`.
    case imageSize(UInt32)
    /// `11 bytes:u32`: the bytes of firmware received so far.
    case receipt(bytesReceived: UInt32)

    public var bytes: [UInt8] {
        switch self {
        case let .response(op, st): return [0x10, op, st]
        case let .imageSize(n): return [0x10, 0x07, 0x01] + LEBytes.bytes(n)
        case let .receipt(n): return [0x11] + LEBytes.bytes(n)
        }
    }

    public init(bytes: [UInt8]) throws {
        switch (bytes.first, bytes.count) {
        case (0x10, 7) where bytes[1] == 0x07 && bytes[2] == 0x01: self = try .imageSize(LEBytes.u32(bytes, 3))
        case (0x10, 3): self = .response(opcode: bytes[1], status: bytes[2])
        case (0x11, 5): self = try .receipt(bytesReceived: LEBytes.u32(bytes, 1))
        default: throw NordicDFUError.malformedFrame("legacy DFU notification \(bytes.hexText)")
        }
    }
}

/// The 12-byte image-size packet that follows Start DFU.
public struct LegacyImageSizes: Sendable, Equatable {
    public var softDevice: UInt32
    public var bootloader: UInt32
    public var application: UInt32

    public init(softDevice: UInt32 = 0, bootloader: UInt32 = 0, application: UInt32) {
        self.softDevice = softDevice
        self.bootloader = bootloader
        self.application = application
    }

    public var bytes: [UInt8] { LEBytes.bytes(softDevice) + LEBytes.bytes(bootloader) + LEBytes.bytes(application) }

    public init(bytes: [UInt8]) throws {
        guard bytes.count == 12 else {
            throw NordicDFUError.malformedFrame("legacy image-size packet of \(bytes.count) bytes (expected 12)")
        }
        try self.init(
            softDevice: LEBytes.u32(bytes, 0), bootloader: LEBytes.u32(bytes, 4), application: LEBytes.u32(bytes, 8))
    }
}
