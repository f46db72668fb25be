import DBus
import Testing

/// Without libdbus (not installed, or too old) a D-Bus call cannot start: the error says which
/// library and which package, and counts as Bluetooth being unavailable, not as a failed flash.
struct LibraryUnavailableTests {
    let error = DBusError.libraryUnavailable(
        library: "libdbus-1.so.3", reason: "libdbus-1.so.3: cannot open shared object file: No such file or directory")

    @Test func theMessageNamesTheLibraryTheLoaderAndThePackageToInstall() {
        #expect(error.description.contains("libdbus-1.so.3 (libdbus-1.so.3: cannot open shared object file"))
        #expect(error.description.contains("install the package libdbus-1-3"))
    }

    @Test func itIsBluetoothUnavailableWhileOtherDBusErrorsAreFailedFlashes() {
        #expect(error.failureKind == .bluetoothUnavailable)
        #expect(DBusError.disconnected.failureKind == .flashFailed)
    }
}
