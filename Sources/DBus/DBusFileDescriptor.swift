import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// A Unix file descriptor carried by a D-Bus message (type `h`), owned by this object.
///
/// libdbus duplicates a descriptor both when it is appended to a message and when it is read
/// from one, so every `DBusFileDescriptor` owns its own descriptor and closes it when the
/// last reference goes away, unless ``take()`` handed it over first. Two values are equal
/// only when they are the same object.
///
/// BlueZ passes the sockets of `AcquireWrite` and `AcquireNotify` this way
/// (`doc/org.bluez.GattCharacteristic.rst`); ``PacketSocket`` reads and writes them.
public final class DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    private let fd: Mutex<Int32>

    /// Takes ownership of `fd` (it is closed with this object).
    public init(taking fd: Int32) {
        self.fd = Mutex(fd)
    }

    deinit { close() }

    /// The descriptor, while this object still owns it.
    public var rawValue: Int32? {
        fd.withLock { $0 >= 0 ? $0 : nil }
    }

    /// Hands the descriptor over to the caller, who must close it; nil when already taken or closed.
    public func take() -> Int32? {
        fd.withLock { value in
            defer { value = -1 }
            return value >= 0 ? value : nil
        }
    }

    /// Closes the descriptor now (idempotent).
    public func close() {
        if let owned = take() { _ = Glibc.close(owned) }
    }

    public static func == (a: DBusFileDescriptor, b: DBusFileDescriptor) -> Bool { a === b }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String { rawValue.map { "fd \($0)" } ?? "fd (closed)" }
}
