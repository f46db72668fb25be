import CBOR

/// One SMP frame: the 8-byte header and its CBOR payload. This is the only
/// place where frames are turned into bytes (`encoded()`) and back
/// (`init(bytes:)`).
public struct SMPFrame: Sendable, Hashable, CustomStringConvertible {
    /// The header; its `length` always matches the encoded payload.
    public private(set) var header: SMPHeader
    /// The payload, usually a map (an empty request is the empty map `A0`).
    public private(set) var payload: CBOR

    /// A frame with `payload`; the header's length field is computed here.
    public init(header: SMPHeader, payload: CBOR) {
        var header = header
        header.length = UInt16(clamping: payload.encoded().count)
        self.header = header
        self.payload = payload
    }

    /// A frame from its parts; the length is computed.
    public init(
        version: SMPVersion = .v2, operation: SMPOperation, group: SMPGroup, command: UInt8,
        sequence: UInt8, payload: CBOR = [:]
    ) {
        self.init(
            header: SMPHeader(
                version: version, operation: operation, length: 0, group: group,
                sequence: sequence, command: command),
            payload: payload)
    }

    /// The bytes of the frame: header, then the deterministic CBOR encoding of the payload.
    public func encoded() throws(SMPError) -> [UInt8] {
        let body = payload.encoded()
        guard body.count <= Int(UInt16.max) else { throw .payloadTooLarge(body.count) }
        var head = header
        head.length = UInt16(body.count)
        return head.bytes + body
    }

    /// Decodes one complete frame: exactly `8 + length` bytes.
    public init(bytes: [UInt8], decoder: CBORDecoder = CBORDecoder()) throws(SMPError) {
        let header = try SMPHeader(bytes: bytes)
        let actual = bytes.count - SMPHeader.size
        guard actual == Int(header.length) else { throw .lengthMismatch(declared: Int(header.length), actual: actual) }
        let payload: CBOR
        do {
            payload = try decoder.decode(Array(bytes[SMPHeader.size...]))
        } catch {
            throw .invalidPayload(error)
        }
        self.header = header
        self.payload = payload
    }

    public var description: String { "\(header): \(payload)" }
}

extension SMPFrame {
    /// The frame carrying a typed request.
    public init<R: SMPRequest>(request: R, version: SMPVersion = .v2, sequence: UInt8) {
        self.init(
            version: version, operation: R.operation, group: R.group, command: R.command,
            sequence: sequence, payload: request.payload)
    }

    /// The frame answering `request` with a typed response: same group,
    /// command and sequence, the response operation, and the request's
    /// version clamped to v2 (as Zephyr's `smp_make_rsp_hdr` does).
    public init<R: SMPResponse>(response: R, to request: SMPHeader) {
        self.init(
            version: SMPFrame.responseVersion(for: request), operation: request.operation.response,
            group: request.group, command: request.command, sequence: request.sequence,
            payload: response.payload)
    }

    /// The frame answering `request` with an error in either form.
    public init(error: SMPErrorResponse, to request: SMPHeader) {
        self.init(
            version: SMPFrame.responseVersion(for: request), operation: request.operation.response,
            group: request.group, command: request.command, sequence: request.sequence,
            payload: error.payload)
    }

    private static func responseVersion(for request: SMPHeader) -> SMPVersion {
        request.version.rawValue > SMPVersion.v2.rawValue ? .v2 : request.version
    }

    /// The error this response reports (`rc` ≠ 0 or `err.rc` ≠ 0), or nil.
    public func errorResponse() throws(SMPError) -> SMPErrorResponse? {
        try SMPErrorResponse(payload: payload)
    }

    /// Decodes this frame as request `R` (for servers). Throws when the
    /// group, command or operation differ.
    public func request<R: SMPRequest>(as type: R.Type) throws(SMPError) -> R {
        guard header.group == R.group, header.command == R.command, header.operation == R.operation else {
            throw .unexpectedFrame(expected: "\(R.name) request", got: header)
        }
        return try R(payload: payload)
    }

    /// Decodes this frame as response `R` (for clients). Throws the device's
    /// error when the payload reports one, and `unexpectedFrame` when the
    /// group or command differ or the frame is not a response.
    public func response<R: SMPResponse>(as type: R.Type) throws(SMPError) -> R {
        guard header.group == R.group, header.command == R.command, header.operation.isResponse else {
            throw .unexpectedFrame(expected: "\(R.name) response", got: header)
        }
        if let error = try errorResponse() { throw error.error }
        return try R(payload: payload)
    }
}
