@testable import DBus
import Testing

/// libdbus is loaded when first needed; when it cannot be, the error says what to install.
struct LibraryLoadingTests {
    @Test func aMissingLibraryIsReportedWithWhatToInstall() throws {
        let error = try #require(Library.problem(loading: "libdbus-bitflash-test-missing.so.3"))
        guard case .libraryUnavailable(let reason) = error else {
            Issue.record("expected libraryUnavailable, got \(error)")
            return
        }
        #expect(reason.contains("libdbus-bitflash-test-missing.so.3"))
        #expect(error.description.contains("apt-get install libdbus-1-3"))
        #expect(error.description.hasPrefix("libdbus-1 is not installed"))
        // Exit code 75 on the command line, as for a missing bluetoothd.
        #expect(error.failureKind == .bluetoothUnavailable)
    }

    @Test func aLibraryWithoutTheFunctionsIsRefused() throws {
        let error = try #require(Library.problem(loading: "libc.so.6"))
        #expect(error.description.contains("has no function dbus_"))
    }

    @Test func theInstalledLibraryLoads() throws {
        #expect(Library.problem(loading: Library.fileName) == nil)
        try Library.load()
    }
}
