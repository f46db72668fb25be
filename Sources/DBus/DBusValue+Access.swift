/// Typed, throwing access to received values.
///
/// Replies come from other processes and may not have the shape the caller expects. These
/// accessors never trap: a wrong type gives ``DBusError/typeMismatch(expected:actual:context:)``.
/// Variants are looked through, so `try value.string()` works on `s` and on `v` holding `s`.
extension DBusValue {
    /// This value with every enclosing variant removed.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    private func mismatch(_ expected: String, _ context: String) -> DBusError {
        .typeMismatch(expected: expected, actual: unwrapped.signature, context: context)
    }

    public func string(_ context: String = "value") throws -> String {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        default: throw mismatch("s", context)
        }
    }

    public func objectPath(_ context: String = "value") throws -> String {
        if case .objectPath(let path) = unwrapped { return path }
        throw mismatch("o", context)
    }

    public func bool(_ context: String = "value") throws -> Bool {
        if case .bool(let b) = unwrapped { return b }
        throw mismatch("b", context)
    }

    public func byte(_ context: String = "value") throws -> UInt8 {
        if case .byte(let b) = unwrapped { return b }
        throw mismatch("y", context)
    }

    public func int16(_ context: String = "value") throws -> Int16 {
        if case .int16(let n) = unwrapped { return n }
        throw mismatch("n", context)
    }

    public func uint16(_ context: String = "value") throws -> UInt16 {
        if case .uint16(let n) = unwrapped { return n }
        throw mismatch("q", context)
    }

    public func int32(_ context: String = "value") throws -> Int32 {
        if case .int32(let n) = unwrapped { return n }
        throw mismatch("i", context)
    }

    public func uint32(_ context: String = "value") throws -> UInt32 {
        if case .uint32(let n) = unwrapped { return n }
        throw mismatch("u", context)
    }

    public func int64(_ context: String = "value") throws -> Int64 {
        if case .int64(let n) = unwrapped { return n }
        throw mismatch("x", context)
    }

    public func uint64(_ context: String = "value") throws -> UInt64 {
        if case .uint64(let n) = unwrapped { return n }
        throw mismatch("t", context)
    }

    public func double(_ context: String = "value") throws -> Double {
        if case .double(let d) = unwrapped { return d }
        throw mismatch("d", context)
    }

    /// The file descriptor of an `h` (still owned by the value: ``DBusFileDescriptor/take()`` it to keep it).
    public func unixFD(_ context: String = "value") throws -> DBusFileDescriptor {
        if case .unixFD(let fd) = unwrapped { return fd }
        throw mismatch("h", context)
    }

    /// The bytes of an `ay` (also accepted: an array of `y` built by hand).
    public func bytes(_ context: String = "value") throws -> [UInt8] {
        switch unwrapped {
        case .bytes(let bytes): return bytes
        case .array("y", let elements): return try elements.map { try $0.byte(context) }
        default: throw mismatch("ay", context)
        }
    }

    /// The elements of any array (`ay` gives `.byte` elements).
    public func array(_ context: String = "value") throws -> [DBusValue] {
        switch unwrapped {
        case .array(_, let elements): return elements
        case .bytes(let bytes): return bytes.map { .byte($0) }
        case .dictionary(_, _, let entries): return entries.map { .structure([$0.key, $0.value]) }
        default: throw mismatch("a*", context)
        }
    }

    /// The strings of an `as` or `ao`.
    public func strings(_ context: String = "value") throws -> [String] {
        try array(context).map { try $0.string(context) }
    }

    /// The fields of a struct.
    public func fields(_ context: String = "value") throws -> [DBusValue] {
        if case .structure(let fields) = unwrapped { return fields }
        throw mismatch("(...)", context)
    }

    /// The entries of any dictionary.
    public func entries(_ context: String = "value") throws -> [DBusDictEntry] {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        if case .array(_, let elements) = unwrapped, elements.isEmpty { return [] }
        throw mismatch("a{..}", context)
    }

    /// A dictionary with string or object-path keys (`a{sv}`, `a{oa{sv}}`, ...), as a Swift dictionary.
    /// Values are returned as received (an `a{sv}` gives `.variant` values; the accessors look through them).
    public func stringKeyed(_ context: String = "value") throws -> [String: DBusValue] {
        var result: [String: DBusValue] = [:]
        for entry in try entries(context) {
            result[try entry.key.string(context)] = entry.value
        }
        return result
    }

    /// An `a{sv}` property map with the variants removed.
    public func properties(_ context: String = "value") throws -> [String: DBusValue] {
        try stringKeyed(context).mapValues(\.unwrapped)
    }

    /// The reply of `GetManagedObjects` (`a{oa{sa{sv}}}`): path → interface → property → value.
    public func managedObjects(_ context: String = "GetManagedObjects") throws -> [String: [String: [String:
        DBusValue]]]
    {
        try stringKeyed(context).mapValues { interfaces in
            try interfaces.stringKeyed(context).mapValues { try $0.properties(context) }
        }
    }
}

extension [DBusValue] {
    /// The argument at `index`, or ``DBusError/missingArgument(index:context:)``.
    public func argument(_ index: Int, _ context: String = "message") throws -> DBusValue {
        guard index >= 0, index < count else { throw DBusError.missingArgument(index: index, context: context) }
        return self[index]
    }

    /// Throws ``DBusError/typeMismatch(expected:actual:context:)`` unless the body has exactly this signature.
    public func expectSignature(_ expected: String, _ context: String = "message") throws {
        let actual = signature
        guard actual == expected else {
            throw DBusError.typeMismatch(expected: expected, actual: actual, context: context)
        }
    }
}
