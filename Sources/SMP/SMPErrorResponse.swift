import CBOR

/// An error answer in either SMP form. Servers encode it with `payload`;
/// clients find it with `init?(payload:)` before reading the command's fields.
public enum SMPErrorResponse: Sendable, Hashable {
    /// `{"rc": n}` plus optional `"rsn": text` (SMP v1, and SMP-layer errors in v2).
    case returnCode(SMPReturnCode, reason: String? = nil)
    /// `{"err": {"group": g, "rc": n}}` (SMP v2 group errors).
    case group(SMPGroupError)

    /// The CBOR map of this error.
    public var payload: CBOR {
        switch self {
        case let .returnCode(rc, reason):
            var pairs: [(String, CBOR)] = [("rc", .unsigned(UInt64(rc.rawValue)))]
            if let reason { pairs.append(("rsn", .textString(reason))) }
            return .textKeyedMap(pairs)
        case let .group(err):
            return ["err": ["group": .unsigned(UInt64(err.group)), "rc": .unsigned(UInt64(err.rc))]]
        }
    }

    /// The error a response payload reports, or nil when it reports success
    /// (no `rc`/`err`, or code 0). Codes that are not unsigned 16-bit integers throw.
    public init?(payload: CBOR) throws(SMPError) {
        if let err = payload["err"] {
            guard let group = err["group"]?.uint64Value, group <= UInt64(UInt16.max) else {
                throw .invalidField("err.group", expected: "an unsigned 16-bit integer", in: "error response")
            }
            guard let rc = err["rc"]?.uint64Value, rc <= UInt64(UInt16.max) else {
                throw .invalidField("err.rc", expected: "an unsigned 16-bit integer", in: "error response")
            }
            if rc != 0 {
                self = .group(SMPGroupError(group: UInt16(group), rc: UInt16(rc)))
                return
            }
        }
        if let rcItem = payload["rc"] {
            guard let rc = rcItem.uint64Value, rc <= UInt64(UInt16.max) else {
                throw .invalidField("rc", expected: "an unsigned 16-bit integer", in: "response")
            }
            if rc != 0 {
                self = .returnCode(SMPReturnCode(rawValue: UInt16(rc)), reason: payload["rsn"]?.stringValue)
                return
            }
        }
        return nil
    }

    /// The same error as an `SMPError`, for throwing.
    public var error: SMPError {
        switch self {
        case let .returnCode(rc, reason): return .returnCode(rc, reason: reason)
        case let .group(err): return .groupError(err)
        }
    }
}
