internal import CDBus

/// Checks done in Swift before anything reaches libdbus: libdbus aborts the process on
/// invalid names, signatures or mistyped container contents, so these must throw first. Each
/// throwing check loads libdbus first (``Library/load()``), so that it is never called unloaded.
enum Validation {
    static func path(_ path: String) throws {
        try Library.load()
        guard !path.contains("\0"), cdbus_validate_path(path, nil) != 0 else {
            throw DBusError.invalidArgument("'\(path)' is not a valid object path (use /a/b_c, no trailing slash)")
        }
    }

    static func interface(_ name: String) throws {
        try Library.load()
        guard !name.contains("\0"), cdbus_validate_interface(name, nil) != 0 else {
            throw DBusError.invalidArgument(
                "'\(name)' is not a valid interface name (use dotted form, e.g. org.bluez.Device1)")
        }
    }

    static func member(_ name: String) throws {
        try Library.load()
        guard !name.contains("\0"), cdbus_validate_member(name, nil) != 0 else {
            throw DBusError.invalidArgument("'\(name)' is not a valid member name")
        }
    }

    static func busName(_ name: String) throws {
        try Library.load()
        guard !name.contains("\0"), cdbus_validate_bus_name(name, nil) != 0 else {
            throw DBusError.invalidArgument("'\(name)' is not a valid bus name")
        }
    }

    static func errorName(_ name: String) throws {
        try Library.load()
        guard !name.contains("\0"), cdbus_validate_error_name(name, nil) != 0 else {
            throw DBusError.invalidArgument(
                "'\(name)' is not a valid error name (use dotted form, e.g. org.bluez.Error.Failed)")
        }
    }

    /// True when `signature` is exactly one complete type.
    static func isSingleType(_ signature: String) -> Bool {
        !signature.contains("\0") && cdbus_signature_validate_single(signature, nil) != 0
    }

    static let basicSignatures: Set<String> = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h"]
    static let maximumVariantDepth = 32

    /// Throws unless every container's contents match its declared signature.
    static func value(_ value: DBusValue, variantDepth: Int = 0) throws {
        try Library.load()
        switch value {
        case .string(let s):
            if s.contains("\0") { throw DBusError.invalidArgument("strings cannot contain NUL characters") }
        case .objectPath(let p):
            try path(p)
        case .signature(let s):
            guard !s.contains("\0"), cdbus_signature_validate(s, nil) != 0 else {
                throw DBusError.invalidArgument("'\(s)' is not a valid signature")
            }
        case .array(let element, let elements):
            guard isSingleType(element) else {
                throw DBusError.invalidArgument("array element signature '\(element)' is not one complete type")
            }
            for e in elements {
                guard e.signature == element else {
                    throw DBusError.invalidArgument("array of '\(element)' holds a '\(e.signature)'")
                }
                try Validation.value(e, variantDepth: variantDepth)
            }
        case .dictionary(let key, let valueType, let entries):
            guard basicSignatures.contains(key), isSingleType(valueType) else {
                throw DBusError.invalidArgument(
                    "dictionary a{\(key)\(valueType)} needs a basic key type and one complete value type")
            }
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == valueType else {
                    throw DBusError.invalidArgument(
                        "dictionary a{\(key)\(valueType)} holds an entry {\(entry.key.signature)\(entry.value.signature)}"
                    )
                }
                try Validation.value(entry.key, variantDepth: variantDepth)
                try Validation.value(entry.value, variantDepth: variantDepth)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgument("a struct needs at least one field") }
            for f in fields { try Validation.value(f, variantDepth: variantDepth) }
        case .variant(let inner):
            guard variantDepth < maximumVariantDepth else {
                throw DBusError.invalidArgument("variants nested deeper than \(maximumVariantDepth)")
            }
            try Validation.value(inner, variantDepth: variantDepth + 1)
        default:
            break
        }
        if case .variant = value { return }
        guard isSingleType(value.signature) else {
            throw DBusError.invalidArgument("'\(value.signature)' is not a valid type (too deeply nested?)")
        }
    }
}
