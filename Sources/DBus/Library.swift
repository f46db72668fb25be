internal import CDBus

/// libdbus, loaded by the first connection or name check rather than at process start: a
/// command that never talks to a bus (`inspect`, `convert`) does not load it, nor libsystemd and
/// the libraries that one pulls in. `CDBus` does the loading; this turns its failure into a
/// ``DBusError/libraryUnavailable(_:)`` the user can act on.
enum Library {
    /// Loads libdbus once; cheap once it is loaded.
    /// - Throws: ``DBusError/libraryUnavailable(_:)`` when it is not installed or lacks a function.
    static func load() throws(DBusError) {
        guard cdbus_load() == 0 else { return }
        throw .libraryUnavailable(String(cString: cdbus_load_failure()))
    }

    /// The file name libdbus is loaded by (its soname).
    static var fileName: String { String(cString: cdbus_library_name) }

    /// What loading the library file `name` in place of libdbus would fail with, or nil when it
    /// loads and has every function bitflash calls. Nothing is kept loaded: this is the check
    /// ``load()`` makes, for trying its failures.
    static func problem(loading name: String) -> DBusError? {
        var reason = [CChar](repeating: 0, count: 512)
        guard cdbus_probe(name, &reason, reason.count) == 0 else { return nil }
        let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .libraryUnavailable(text)
    }
}
