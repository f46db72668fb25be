import CBOR

/// OS group (0), command 0: echo `{"d": text}` → `{"r": text}`. Sent as a write.
public struct EchoRequest: SMPRequest {
    public typealias Response = EchoResponse
    public static let group = SMPGroup.os
    public static let command: UInt8 = 0
    public static let operation = SMPOperation.write
    public static let name = "OS echo"

    public var text: String
    public init(text: String) { self.text = text }

    public var payload: CBOR { ["d": .textString(text)] }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        text = try f.required("d", f.text)
    }
}

/// The answer to `EchoRequest`.
public struct EchoResponse: SMPResponse {
    public static let group = SMPGroup.os
    public static let command: UInt8 = 0
    public static let name = "OS echo"

    public var text: String
    public init(text: String) { self.text = text }

    public var payload: CBOR { ["r": .textString(text)] }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " response")
        text = try f.required("r", f.text)
    }
}

/// OS group (0), command 5: reset. `force` is sent as `{"force": 1}` (an
/// integer, as Zephyr documents); decoding also accepts a boolean.
/// `bootMode` asks the device to boot into a mode such as its bootloader (1).
public struct ResetRequest: SMPRequest {
    public typealias Response = ResetResponse
    public static let group = SMPGroup.os
    public static let command: UInt8 = 5
    public static let operation = SMPOperation.write
    public static let name = "OS reset"

    public var force: Bool
    public var bootMode: UInt8?
    public init(force: Bool = false, bootMode: UInt8? = nil) {
        self.force = force
        self.bootMode = bootMode
    }

    public var payload: CBOR {
        payloadMap([
            ("force", force ? Optional(CBOR.unsigned(1)) : nil), ("boot_mode", bootMode.map { .unsigned(UInt64($0)) })
        ])
    }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        switch payload["force"] {
        case nil: force = false
        case let .boolean(b)?: force = b
        case let item?:
            guard let n = item.intValue else {
                throw .invalidField("force", expected: "an integer or boolean", in: f.message)
            }
            force = n > 0
        }
        let mode = try f.unsigned("boot_mode")
        guard mode.map({ $0 <= 255 }) ?? true else {
            throw .invalidField("boot_mode", expected: "0…255", in: f.message)
        }
        bootMode = mode.map { UInt8($0) }
    }
}

/// The answer to `ResetRequest`: an empty map, sent before the device resets.
public struct ResetResponse: SMPResponse {
    public static let group = SMPGroup.os
    public static let command: UInt8 = 5
    public static let name = "OS reset"
    public init() {}
    public var payload: CBOR { [:] }
    public init(payload: CBOR) throws(SMPError) {
        _ = try PayloadFields(payload, message: Self.name + " response")
    }
}

/// OS group (0), command 6: McuMgr parameters (read, empty map).
public struct MCUmgrParametersRequest: SMPRequest {
    public typealias Response = MCUmgrParametersResponse
    public static let group = SMPGroup.os
    public static let command: UInt8 = 6
    public static let operation = SMPOperation.read
    public static let name = "OS McuMgr parameters"
    public init() {}
    public var payload: CBOR { [:] }
    public init(payload: CBOR) throws(SMPError) {
        _ = try PayloadFields(payload, message: Self.name + " request")
    }
}

/// The answer to `MCUmgrParametersRequest`: `{"buf_size", "buf_count"}`.
public struct MCUmgrParametersResponse: SMPResponse {
    public static let group = SMPGroup.os
    public static let command: UInt8 = 6
    public static let name = "OS McuMgr parameters"

    /// Size of one SMP buffer on the device, header and payload included: the
    /// largest frame it can reassemble.
    public var bufferSize: Int
    /// Number of SMP buffers on the device.
    public var bufferCount: Int
    public init(bufferSize: Int, bufferCount: Int) {
        self.bufferSize = bufferSize
        self.bufferCount = bufferCount
    }

    public var payload: CBOR { ["buf_size": .int(bufferSize), "buf_count": .int(bufferCount)] }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " response")
        bufferSize = try f.required("buf_size", f.unsigned)
        bufferCount = try f.required("buf_count", f.unsigned)
    }
}

/// OS group (0), command 8: bootloader information (read). Without a query
/// the device names its bootloader; with `"mode"` MCUboot reports its mode.
public struct BootloaderInfoRequest: SMPRequest {
    public typealias Response = BootloaderInfoResponse
    public static let group = SMPGroup.os
    public static let command: UInt8 = 8
    public static let operation = SMPOperation.read
    public static let name = "OS bootloader information"

    public var query: String?
    public init(query: String? = nil) { self.query = query }

    public var payload: CBOR { payloadMap([("query", query.map { .textString($0) })]) }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " request")
        query = try f.text("query")
    }
}

/// The answer to `BootloaderInfoRequest`: `{"bootloader": "MCUboot"}` or,
/// for the mode query, `{"mode": int, "no-downgrade"?: bool}`.
public struct BootloaderInfoResponse: SMPResponse {
    public static let group = SMPGroup.os
    public static let command: UInt8 = 8
    public static let name = "OS bootloader information"

    public var bootloader: String?
    /// MCUboot mode: −1 unknown, 0 single application, 1 swap using scratch,
    /// 2 overwrite only, 3 swap without scratch, 4 DirectXIP without revert,
    /// 5 DirectXIP with revert, 6 RAM load, 7 firmware loader.
    public var mode: Int?
    public var noDowngrade: Bool?
    public init(bootloader: String? = nil, mode: Int? = nil, noDowngrade: Bool? = nil) {
        self.bootloader = bootloader
        self.mode = mode
        self.noDowngrade = noDowngrade
    }

    public var payload: CBOR {
        payloadMap([
            ("bootloader", bootloader.map { .textString($0) }), ("mode", mode.map { .int($0) }),
            ("no-downgrade", noDowngrade.map { .boolean($0) })
        ])
    }
    public init(payload: CBOR) throws(SMPError) {
        let f = try PayloadFields(payload, message: Self.name + " response")
        bootloader = try f.text("bootloader")
        mode = try f.integer("mode")
        noDowngrade = try f.bool("no-downgrade")
    }
}
