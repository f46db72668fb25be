internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// libdbus, opened the first time bitflash needs it.
///
/// The binary does not link libdbus: a process that never talks to BlueZ (`inspect`, `convert`,
/// `--version`, the simulated boards) then never loads it, nor libsystemd and the compression and
/// crypto libraries libsystemd links, which the loader would otherwise map and relocate at every
/// start. The first connection, message or name check opens it (`load()`); what holds a libdbus
/// object afterwards calls through `api`. Opened once, never closed.
enum LibDBus {
    /// The soname of libdbus 1.x, which Debian and Ubuntu ship in the package `libdbus-1-3`.
    static let soname = "libdbus-1.so.3"

    /// The resolved entry points, at an address that stays valid for the process (the wrappers
    /// in the C shim take them by pointer).
    private struct Table: @unchecked Sendable {
        // Written once before it is published by the `static let`, then only read.
        let pointer: UnsafePointer<cdbus_api>
    }

    private static let opened: Result<Table, DBusError> = open()

    /// The entry points, opening libdbus the first time; throws
    /// ``DBusError/libraryUnavailable(library:reason:)`` when it cannot be opened.
    static func load() throws(DBusError) -> cdbus_api {
        try opened.get().pointer.pointee
    }

    /// The entry points, for code that holds what `load()` made possible (a connection, a
    /// message, an error); libdbus is open by then.
    static var api: cdbus_api { table.pointee }

    /// `api` by address, for the C shim's wrappers.
    static var table: UnsafePointer<cdbus_api> {
        switch opened {
        case .success(let table): return table.pointer
        case .failure(let error): preconditionFailure("libdbus called before it was loaded: \(error)")
        }
    }

    private static func open() -> Result<Table, DBusError> {
        guard let library = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "the dynamic loader did not say why"
            return .failure(.libraryUnavailable(library: soname, reason: reason))
        }
        let table = UnsafeMutablePointer<cdbus_api>.allocate(capacity: 1)
        table.initialize(to: cdbus_api())
        if let missing = cdbus_resolve(library, table) {
            table.deallocate()
            dlclose(library)
            return .failure(
                .libraryUnavailable(
                    library: soname,
                    reason: "it has no function \(String(cString: missing)), so it is older than bitflash needs"))
        }
        return .success(Table(pointer: UnsafePointer(table)))
    }
}
