import CBOR
import Diagnostics

/// Everything that can go wrong with SMP frames: malformed bytes, payloads
/// that are not what the command expects, and errors reported by the device.
public enum SMPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer than 8 bytes where a header was expected.
    case truncatedHeader(available: Int)
    /// A header that breaks the layout (reserved bits, unknown operation).
    case malformedHeader(String)
    /// The header's length field disagrees with the payload present.
    case lengthMismatch(declared: Int, actual: Int)
    /// A payload too long for the 16-bit length field.
    case payloadTooLarge(Int)
    /// A declared frame longer than the reassembler accepts.
    case frameTooLarge(declared: Int, limit: Int)
    /// The payload is not valid CBOR.
    case invalidPayload(CBORError)
    /// A frame for another command than the one being decoded.
    case unexpectedFrame(expected: String, got: SMPHeader)
    /// A required key is missing from the payload map.
    case missingField(String, in: String)
    /// A key of the payload has the wrong CBOR type or an out-of-range value.
    case invalidField(String, expected: String, in: String)
    /// The device answered with an SMP-level `rc` (SMP v1, or SMP-layer errors in v2).
    case returnCode(SMPReturnCode, reason: String?)
    /// The device answered with a v2 group error `err: {group, rc}`.
    case groupError(SMPGroupError)
    /// No data fits in an upload frame of this size.
    case chunkDoesNotFit(frameLimit: Int, overhead: Int)
    /// A caller-supplied value is out of range.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .truncatedHeader(n):
            return "SMP frame too short: \(n) of the 8 header bytes; the notification was cut short or is not SMP"
        case let .malformedHeader(why):
            return "malformed SMP header: \(why); the peer may not speak SMP"
        case let .lengthMismatch(declared, actual):
            return
                "SMP header declares a \(declared)-byte payload but \(actual) bytes are present; the frame is truncated or has extra bytes"
        case let .payloadTooLarge(n):
            return
                "SMP payload of \(n) bytes does not fit the 16-bit length field (at most 65535); send less data per request"
        case let .frameTooLarge(declared, limit):
            return
                "SMP frame declares \(declared) payload bytes, more than the accepted \(limit); the stream is corrupt or the limit too low"
        case let .invalidPayload(error):
            return "SMP payload is not valid CBOR: \(error)"
        case let .unexpectedFrame(expected, got):
            return "expected \(expected) but received \(got); the device answered a different request"
        case let .missingField(key, message):
            return "SMP \(message) lacks the required key \"\(key)\"; the peer uses an incompatible format"
        case let .invalidField(key, expected, message):
            return "SMP \(message) has key \"\(key)\" that is not \(expected); the peer uses an incompatible format"
        case let .returnCode(rc, reason):
            return "device reported \(rc)" + (reason.map { " — \($0)" } ?? "")
        case let .groupError(err):
            return "device reported \(err)"
        case let .chunkDoesNotFit(limit, overhead):
            return
                "an upload frame limited to \(limit) bytes has no room for data after \(overhead) bytes of header and fields; use a larger MTU or buffer"
        case let .invalidArgument(why):
            return "invalid SMP argument: \(why)"
        }
    }
}

extension SMPError: DomainError {
    public var failureKind: FailureKind { .flashFailed }
}
