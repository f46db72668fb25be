internal import CDBus

/// Writes ``DBusValue``s into libdbus message iterators and reads them back.
///
/// Encoding expects values already checked by ``Validation/value(_:variantDepth:)``.
/// Decoding reads messages libdbus has already validated against their signature, so the
/// shape is always self-consistent; what the caller expected is checked by the accessors.
enum MessageCodec {
    // MARK: Encoding

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws {
        switch value {
        case .byte(let v): try basic(&iter, CDBUS_TYPE_BYTE, v)
        case .bool(let v): try basic(&iter, CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try basic(&iter, CDBUS_TYPE_INT16, v)
        case .uint16(let v): try basic(&iter, CDBUS_TYPE_UINT16, v)
        case .int32(let v): try basic(&iter, CDBUS_TYPE_INT32, v)
        case .uint32(let v): try basic(&iter, CDBUS_TYPE_UINT32, v)
        case .int64(let v): try basic(&iter, CDBUS_TYPE_INT64, v)
        case .uint64(let v): try basic(&iter, CDBUS_TYPE_UINT64, v)
        case .double(let v): try basic(&iter, CDBUS_TYPE_DOUBLE, v)
        case .string(let s): try string(&iter, CDBUS_TYPE_STRING, s)
        case .objectPath(let s): try string(&iter, CDBUS_TYPE_OBJECT_PATH, s)
        case .signature(let s): try string(&iter, CDBUS_TYPE_SIGNATURE, s)
        case .bytes(let bytes):
            try container(&iter, CDBUS_TYPE_ARRAY, "y") { sub in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buffer in
                    cdbus_append_bytes(&sub, buffer.baseAddress, Int32(buffer.count))
                }
                try check(ok)
            }
        case .array(let element, let elements):
            try container(&iter, CDBUS_TYPE_ARRAY, element) { sub in
                for e in elements { try append(e, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            try container(&iter, CDBUS_TYPE_ARRAY, "{" + key + valueType + "}") { sub in
                for entry in entries {
                    try container(&sub, CDBUS_TYPE_DICT_ENTRY, nil) { pair in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try container(&iter, CDBUS_TYPE_STRUCT, nil) { sub in
                for f in fields { try append(f, to: &sub) }
            }
        case .variant(let inner):
            try container(&iter, CDBUS_TYPE_VARIANT, inner.signature) { sub in
                try append(inner, to: &sub)
            }
        case .unixFD(let descriptor):
            // libdbus appends a duplicate: the descriptor stays the caller's.
            guard let fd = descriptor.rawValue else {
                throw DBusError.invalidArgument(
                    "a file descriptor that was already closed or handed over cannot be sent")
            }
            try basic(&iter, CDBUS_TYPE_UNIX_FD, fd)
        }
    }

    private static func check(_ ok: dbus_bool_t) throws {
        if ok == 0 { throw DBusError.outOfMemory }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) throws {
        var copy = value
        try check(cdbus_message_iter_append_basic(&iter, type, &copy))
    }

    private static func string(_ iter: inout DBusMessageIter, _ type: Int32, _ value: String) throws {
        try check(value.withCString { cdbus_append_string(&iter, type, $0) })
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { cdbus_message_iter_open_container(&iter, type, $0, &sub) }
        } else {
            opened = cdbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        try check(opened)
        do {
            try body(&sub)
        } catch {
            cdbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        try check(cdbus_message_iter_close_container(&iter, &sub))
    }

    // MARK: Decoding

    static func decodeBody(_ message: OpaquePointer) throws -> [DBusValue] {
        var iter = DBusMessageIter()
        guard cdbus_message_iter_init(message, &iter) != 0 else { return [] }
        return try decodeSequence(&iter)
    }

    private static func decodeSequence(_ iter: inout DBusMessageIter) throws -> [DBusValue] {
        var values: [DBusValue] = []
        while cdbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID {
            values.append(try decode(&iter))
            cdbus_message_iter_next(&iter)
        }
        return values
    }

    /// Decodes the value under the iterator (without advancing it).
    private static func decode(_ iter: inout DBusMessageIter) throws -> DBusValue {
        let type = cdbus_message_iter_get_arg_type(&iter)
        var basic = DBusBasicValue()
        switch type {
        case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH, CDBUS_TYPE_SIGNATURE:
            let text = cdbus_get_string(&iter).map { String(cString: $0) } ?? ""
            if type == CDBUS_TYPE_STRING { return .string(text) }
            return type == CDBUS_TYPE_OBJECT_PATH ? .objectPath(text) : .signature(text)
        case CDBUS_TYPE_ARRAY:
            return try decodeArray(&iter)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            cdbus_message_iter_recurse(&iter, &sub)
            return .structure(try decodeSequence(&sub))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            cdbus_message_iter_recurse(&iter, &sub)
            return .variant(try decode(&sub))
        case CDBUS_TYPE_UNIX_FD, CDBUS_TYPE_BYTE, CDBUS_TYPE_BOOLEAN, CDBUS_TYPE_INT16, CDBUS_TYPE_UINT16,
            CDBUS_TYPE_INT32,
            CDBUS_TYPE_UINT32, CDBUS_TYPE_INT64, CDBUS_TYPE_UINT64, CDBUS_TYPE_DOUBLE:
            break
        default:
            // Never hand libdbus a type it cannot read with get_basic: it would abort.
            throw DBusError.typeMismatch(
                expected: "a known D-Bus type", actual: String(UnicodeScalar(UInt8(truncatingIfNeeded: type))),
                context: "message body")
        }
        cdbus_message_iter_get_basic(&iter, &basic)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic.byt)
        case CDBUS_TYPE_BOOLEAN: return .bool(basic.bool_val != 0)
        case CDBUS_TYPE_INT16: return .int16(basic.i16)
        case CDBUS_TYPE_UINT16: return .uint16(basic.u16)
        case CDBUS_TYPE_INT32: return .int32(basic.i32)
        case CDBUS_TYPE_UINT32: return .uint32(basic.u32)
        case CDBUS_TYPE_INT64: return .int64(Int64(basic.i64))
        case CDBUS_TYPE_UINT64: return .uint64(UInt64(basic.u64))
        case CDBUS_TYPE_DOUBLE: return .double(basic.dbl)
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands out a duplicate, which the value now owns; -1 when the message
            // came over a connection that could not carry the descriptor.
            guard basic.fd >= 0 else {
                throw DBusError.typeMismatch(
                    expected: "a file descriptor", actual: "h without a descriptor", context: "message body")
            }
            return .unixFD(DBusFileDescriptor(taking: basic.fd))
        default:
            throw DBusError.typeMismatch(
                expected: "a known D-Bus type", actual: String(UnicodeScalar(UInt8(truncatingIfNeeded: type))),
                context: "message body")
        }
    }

    private static func decodeArray(_ iter: inout DBusMessageIter) throws -> DBusValue {
        let full = signature(of: &iter)
        let element = String(full.dropFirst())
        var sub = DBusMessageIter()
        cdbus_message_iter_recurse(&iter, &sub)
        if element == "y" {
            var count: Int32 = 0
            guard cdbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_BYTE,
                let bytes = cdbus_get_bytes(&sub, &count), count > 0
            else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: bytes, count: Int(count))))
        }
        if element.hasPrefix("{"), element.count >= 4 {
            let inner = element.dropFirst().dropLast()
            let key = String(inner.prefix(1))
            let value = String(inner.dropFirst())
            var entries: [DBusDictEntry] = []
            while cdbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var pair = DBusMessageIter()
                cdbus_message_iter_recurse(&sub, &pair)
                let k = try decode(&pair)
                guard cdbus_message_iter_next(&pair) != 0 else {
                    throw DBusError.typeMismatch(
                        expected: "{\(key)\(value)}", actual: "{\(key)}", context: "dictionary entry")
                }
                let v = try decode(&pair)
                entries.append(DBusDictEntry(key: k, value: v))
                cdbus_message_iter_next(&sub)
            }
            return .dictionary(keySignature: key, valueSignature: value, entries)
        }
        return .array(elementSignature: element, try decodeSequence(&sub))
    }

    private static func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = cdbus_message_iter_get_signature(&iter) else { return "" }
        defer { cdbus_free(raw) }
        return String(cString: raw)
    }
}
