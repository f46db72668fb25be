import Diagnostics
import FirmwareImage

/// Secure DFU objects: the init command and the firmware data.
public enum SecureDFUObjectType: UInt8, Sendable, Equatable {
    case command = 0x01
    case data = 0x02
}

/// A request written to the Secure DFU control point (docs/protocols/nordic-dfu.md §2.3).
public enum SecureDFURequest: Sendable, Equatable {
    /// `01 type size:u32`.
    case create(type: UInt8, size: UInt32)
    /// `02 n:u16`: a checksum notification after every `n` packet writes (0: none).
    case setPRN(UInt16)
    /// `03`.
    case calculateChecksum
    /// `04`.
    case execute
    /// `06 type`.
    case select(type: UInt8)
    /// `0C`.
    case abort
    /// Any other opcode (protocol version, MTU, ping, …), with its parameters.
    case other(opcode: UInt8, parameters: [UInt8])

    public static func create(_ type: SecureDFUObjectType, size: UInt32) -> Self {
        .create(type: type.rawValue, size: size)
    }
    public static func select(_ type: SecureDFUObjectType) -> Self { .select(type: type.rawValue) }

    public var opcode: UInt8 {
        switch self {
        case .create: return 0x01
        case .setPRN: return 0x02
        case .calculateChecksum: return 0x03
        case .execute: return 0x04
        case .select: return 0x06
        case .abort: return 0x0C
        case let .other(op, _): return op
        }
    }

    public var bytes: [UInt8] {
        switch self {
        case let .create(type, size): return [0x01, type] + LEBytes.bytes(size)
        case let .setPRN(n): return [0x02] + LEBytes.bytes(n)
        case .calculateChecksum: return [0x03]
        case .execute: return [0x04]
        case let .select(type): return [0x06, type]
        case .abort: return [0x0C]
        case let .other(op, p): return [op] + p
        }
    }

    /// Decodes a control point write. Known opcodes with the wrong length are errors.
    public init(bytes: [UInt8]) throws {
        guard let op = bytes.first else { throw NordicDFUError.malformedFrame("an empty control point write") }
        func need(_ n: Int) throws {
            guard bytes.count == n else {
                throw NordicDFUError.malformedFrame(
                    "Secure DFU request 0x\(Hex.number(op, digits: 2, prefix: false)) of \(bytes.count) bytes (expected \(n))"
                )
            }
        }
        switch op {
        case 0x01: try need(6); self = try .create(type: bytes[1], size: LEBytes.u32(bytes, 2))
        case 0x02: try need(3); self = try .setPRN(LEBytes.u16(bytes, 1))
        case 0x03: try need(1); self = .calculateChecksum
        case 0x04: try need(1); self = .execute
        case 0x06: try need(2); self = .select(type: bytes[1])
        case 0x0C: try need(1); self = .abort
        default: self = .other(opcode: op, parameters: Array(bytes.dropFirst()))
        }
    }
}

/// Result codes of Secure DFU responses.
public enum SecureDFUResult: UInt8, Sendable, Equatable, CaseIterable {
    case invalid = 0x00, success = 0x01, opcodeNotSupported = 0x02, invalidParameter = 0x03
    case insufficientResources = 0x04, invalidObject = 0x05, signatureMismatch = 0x06
    case unsupportedType = 0x07, operationNotPermitted = 0x08, operationFailed = 0x0A, extendedError = 0x0B

    var words: String {
        switch self {
        case .invalid: return "invalid code"
        case .success: return "success"
        case .opcodeNotSupported: return "opcode not supported"
        case .invalidParameter: return "invalid parameter"
        case .insufficientResources: return "insufficient resources"
        case .invalidObject: return "invalid object"
        case .signatureMismatch: return "signature mismatch"
        case .unsupportedType: return "unsupported type"
        case .operationNotPermitted: return "operation not permitted"
        case .operationFailed: return "operation failed"
        case .extendedError: return "extended error"
        }
    }
}

/// A Secure DFU control point notification (`60 <op> <result> …`).
public enum SecureDFUResponse: Sendable, Equatable {
    /// `60 op 01` (Create, Execute, Set PRN, Abort).
    case success(opcode: UInt8)
    /// `60 06 01 max:u32 offset:u32 crc:u32`.
    case selected(maxSize: UInt32, offset: UInt32, crc: UInt32)
    /// `60 03 01 offset:u32 crc:u32`: the answer to Calculate checksum, and every PRN.
    case checksum(offset: UInt32, crc: UInt32)
    /// `60 op result` or `60 op 0B ext`.
    case failure(opcode: UInt8, result: UInt8, extended: UInt8?)

    public var opcode: UInt8 {
        switch self {
        case let .success(op): return op
        case .selected: return 0x06
        case .checksum: return 0x03
        case let .failure(op, _, _): return op
        }
    }

    public var bytes: [UInt8] {
        switch self {
        case let .success(op): return [0x60, op, 0x01]
        case let .selected(max, off, crc):
            return [0x60, 0x06, 0x01] + LEBytes.bytes(max) + LEBytes.bytes(off) + LEBytes.bytes(crc)
        case let .checksum(off, crc): return [0x60, 0x03, 0x01] + LEBytes.bytes(off) + LEBytes.bytes(crc)
        case let .failure(op, result, ext): return [0x60, op, result] + (ext.map { [$0] } ?? [])
        }
    }

    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 3, bytes[0] == 0x60 else {
            throw NordicDFUError.malformedFrame("Secure DFU notification \(bytes.hexText) (expected 60 <op> <result>)")
        }
        let op = bytes[1], result = bytes[2]
        func need(_ n: Int) throws {
            guard bytes.count == n else {
                throw NordicDFUError.malformedFrame(
                    "Secure DFU response \(bytes.hexText) has \(bytes.count) bytes (expected \(n))")
            }
        }
        switch (op, result) {
        case (0x06, 0x01):
            try need(15);
            self = try .selected(
                maxSize: LEBytes.u32(bytes, 3), offset: LEBytes.u32(bytes, 7), crc: LEBytes.u32(bytes, 11))
        case (0x03, 0x01): try need(11); self = try .checksum(offset: LEBytes.u32(bytes, 3), crc: LEBytes.u32(bytes, 7))
        case (_, 0x01): try need(3); self = .success(opcode: op)
        case (_, 0x0B): try need(4); self = .failure(opcode: op, result: result, extended: bytes[3])
        default: try need(3); self = .failure(opcode: op, result: result, extended: nil)
        }
    }
}

/// The buttonless characteristic's messages (docs/protocols/nordic-dfu.md §2.1).
public enum ButtonlessMessage: Sendable, Equatable {
    /// `01`: enter the bootloader.
    case enterBootloader
    /// `20 <req-op> <result>`: the indication answering a request.
    case response(opcode: UInt8, result: UInt8)

    /// Result codes of the buttonless service.
    public static let success: UInt8 = 0x01, notSupported: UInt8 = 0x02, operationFailed: UInt8 = 0x04
    public static let busy: UInt8 = 0x06, notBonded: UInt8 = 0x07

    public var bytes: [UInt8] {
        switch self {
        case .enterBootloader: return [0x01]
        case let .response(op, r): return [0x20, op, r]
        }
    }

    public init(bytes: [UInt8]) throws {
        if bytes == [0x01] { self = .enterBootloader; return }
        guard bytes.count == 3, bytes[0] == 0x20 else {
            throw NordicDFUError.malformedFrame("buttonless DFU message \(bytes.hexText)")
        }
        self = .response(opcode: bytes[1], result: bytes[2])
    }
}

extension Array where Element == UInt8 {
    /// `60 01 01` in messages; `(empty)` for no bytes.
    public var hexText: String { isEmpty ? "(empty)" : Hex.bytes(self, separator: " ") }
}

/// What the micro:bit V2 / Calliope mini 3 Secure DFU bootloader can hold while it writes flash
/// (docs/protocols/nordic-dfu.md §2.2, §6): its client paces packets by these, its simulation drops by them.
public enum SecureDFUBootloaderLimits {
    /// Entries of fstorage's queue (`NRF_FSTORAGE_SD_QUEUE_SIZE`, V2 bootloader `sdk_config.h`);
    /// the running operation keeps its entry until it ends.
    public static let flashQueue = 16
    /// Receive buffers of the BLE transport (`MAX_DFU_BUFFERS` = 4096 / 244 + 1, `nrf_dfu_ble.c`).
    public static let receiveBuffers = 17
    /// A flash page of the nRF52833 (`CODE_PAGE_SIZE`): a data object's Create erases its pages.
    public static let pageSize = 4096
    /// `sizeof(nrf_dfu_settings_t)` of nRF5 SDK 16 (`nrf_dfu_types.h`, packed): 92 bytes up to
    /// the init command, its 512, the boot validation CRC and three 65-byte records, the peer
    /// data and the advertising name; about 896 bytes (derived from the struct, not measured).
    public static let settingsBytes = 896
    /// The flash operations of `nrf_dfu_settings_write_and_backup` (SDK 16 `nrf_dfu_settings.c`
    /// `settings_write`, twice): erase the settings page, write it, erase the backup page, write it.
    public static let settingsOperations = 4
}
