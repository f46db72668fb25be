import CBOR

/// A command of a management group, named for error messages.
public protocol SMPCommand: Sendable, Equatable {
    /// The group id of the command.
    static var group: SMPGroup { get }
    /// The command id within the group.
    static var command: UInt8 { get }
    /// A readable name, e.g. "image upload".
    static var name: String { get }
}

/// A typed request: the client encodes it with `payload`, a server decodes it with `init(payload:)`.
public protocol SMPRequest: SMPCommand {
    /// The response type answering this request.
    associatedtype Response: SMPResponse
    /// `.read` or `.write`.
    static var operation: SMPOperation { get }
    /// The CBOR map of this request.
    var payload: CBOR { get }
    /// Decodes the CBOR map of this request.
    init(payload: CBOR) throws(SMPError)
}

/// A typed successful response: a server encodes it with `payload`, the client
/// decodes it with `init(payload:)` (after `SMPFrame.response(as:)` has ruled out an error).
public protocol SMPResponse: SMPCommand {
    /// The CBOR map of this response.
    var payload: CBOR { get }
    /// Decodes the CBOR map of this response.
    init(payload: CBOR) throws(SMPError)
}

/// Typed reads of the keys of a payload map, with errors that name the key and message.
struct PayloadFields {
    let map: CBOR
    let message: String

    init(_ payload: CBOR, message: String) throws(SMPError) {
        guard payload.mapValue != nil else { throw .invalidField("payload", expected: "a map", in: message) }
        self.map = payload
        self.message = message
    }

    func unsigned(_ key: String) throws(SMPError) -> Int? {
        guard let item = map[key] else { return nil }
        guard let n = item.uint64Value, n <= UInt64(Int.max) else {
            throw .invalidField(key, expected: "an unsigned integer", in: message)
        }
        return Int(n)
    }

    func integer(_ key: String) throws(SMPError) -> Int? {
        guard let item = map[key] else { return nil }
        guard let n = item.intValue else { throw .invalidField(key, expected: "an integer", in: message) }
        return n
    }

    func bytes(_ key: String) throws(SMPError) -> [UInt8]? {
        guard let item = map[key] else { return nil }
        guard let b = item.bytesValue else { throw .invalidField(key, expected: "a byte string", in: message) }
        return b
    }

    func text(_ key: String) throws(SMPError) -> String? {
        guard let item = map[key] else { return nil }
        guard let s = item.stringValue else { throw .invalidField(key, expected: "a text string", in: message) }
        return s
    }

    func bool(_ key: String) throws(SMPError) -> Bool? {
        guard let item = map[key] else { return nil }
        guard let b = item.boolValue else { throw .invalidField(key, expected: "a boolean", in: message) }
        return b
    }

    func required<T>(_ key: String, _ read: (String) throws(SMPError) -> T?) throws(SMPError) -> T {
        guard let value = try read(key) else { throw .missingField(key, in: message) }
        return value
    }
}

/// Builds a text-keyed map from optional entries, leaving out the nil ones.
func payloadMap(_ entries: [(String, CBOR?)]) -> CBOR {
    .textKeyedMap(entries.compactMap { key, value in value.map { (key, $0) } })
}
