/// The SMP-level result code `rc` (`enum mcumgr_err_t`, MGMT_ERR_*), used by
/// SMP v1 for every error and by SMP v2 for errors of the SMP layer itself.
/// Unknown values keep their number; none of them is ever read as success.
public enum SMPReturnCode: Sendable, Hashable, CustomStringConvertible {
    case ok
    case unknown
    case noMemory
    case invalidValue
    case timeout
    case noEntry
    case badState
    case messageTooLarge
    case notSupported
    case corrupt
    case busy
    case accessDenied
    case unsupportedTooOld
    case unsupportedTooNew
    /// Any other value, including user-defined codes (≥ 256, MGMT_ERR_EPERUSER).
    case unrecognized(UInt16)

    private static let table: [(SMPReturnCode, UInt16, String, String)] = [
        (.ok, 0, "EOK", "success"),
        (.unknown, 1, "EUNKNOWN", "unknown error"),
        (.noMemory, 2, "ENOMEM", "the device ran out of memory (often: the response did not fit its buffer)"),
        (.invalidValue, 3, "EINVAL", "a value in the request is invalid"),
        (.timeout, 4, "ETIMEOUT", "the operation timed out on the device"),
        (.noEntry, 5, "ENOENT", "no such entry"),
        (.badState, 6, "EBADSTATE", "the device's current state does not allow this command"),
        (.messageTooLarge, 7, "EMSGSIZE", "the response would be too large"),
        (.notSupported, 8, "ENOTSUP", "the device does not support this group or command"),
        (.corrupt, 9, "ECORRUPT", "the device found the request corrupt"),
        (.busy, 10, "EBUSY", "the device is busy with another command; retry shortly"),
        (.accessDenied, 11, "EACCESSDENIED", "access denied"),
        (.unsupportedTooOld, 12, "UNSUPPORTED_TOO_OLD", "the device does not support this old SMP version; use SMP v2"),
        (.unsupportedTooNew, 13, "UNSUPPORTED_TOO_NEW", "the device does not support this new SMP version; use SMP v1")
    ]

    public init(rawValue: UInt16) {
        self = Self.table.first(where: { $0.1 == rawValue })?.0 ?? .unrecognized(rawValue)
    }

    public var rawValue: UInt16 {
        if case let .unrecognized(v) = self { return v }
        return Self.table.first(where: { $0.0 == self })?.1 ?? 0
    }

    /// The MGMT_ERR_* name, e.g. `MGMT_ERR_EBUSY`.
    public var name: String {
        if case let .unrecognized(v) = self { return v >= 256 ? "MGMT_ERR_EPERUSER+\(v - 256)" : "MGMT_ERR_\(v)" }
        return "MGMT_ERR_" + (Self.table.first(where: { $0.0 == self })?.2 ?? "?")
    }

    /// What the code means, in words.
    public var meaning: String {
        if case let .unrecognized(v) = self {
            return v >= 256 ? "application-defined error \(v)" : "unrecognized error code \(v)"
        }
        return Self.table.first(where: { $0.0 == self })?.3 ?? ""
    }

    public var description: String { "\(name) (\(rawValue)): \(meaning)" }
}
