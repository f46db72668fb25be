internal import CDBus
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// Owns the libdbus connection pointer: closes and releases it exactly once.
final class RawConnection: @unchecked Sendable {
    // libdbus connections are thread-safe once `dbus_threads_init_default` has run.
    let pointer: OpaquePointer
    private let closed = Atomic<Bool>(false)

    private static let threadsInitialised: Bool = {
        cdbus_threads_init_default() != 0
    }()

    /// Opens a private connection to `address` and registers with the bus (`Hello`), within
    /// `timeout`: a socket that accepts and never answers, or answers what is no D-Bus, fails
    /// once the time is up instead of blocking for ever.
    init(address: String, timeout: Duration) throws {
        try Library.load()
        guard RawConnection.threadsInitialised else { throw DBusError.outOfMemory }
        var error = CDBus.DBusError()
        cdbus_error_init(&error)
        defer { cdbus_error_free(&error) }
        guard let raw = cdbus_connection_open_private(address, &error) else {
            throw DBusError.connectionFailed(address: address, reason: RawConnection.describe(&error))
        }
        cdbus_connection_set_exit_on_disconnect(raw, 0)
        // libdbus authenticates and says Hello blocking, without a bound of its own while it
        // authenticates: the handshake runs on a thread of its own, and when the time is up the
        // socket is shut down, which ends the blocked call at once.
        var fd: Int32 = -1
        _ = cdbus_connection_get_unix_fd(raw, &fd)
        let handshake = Handshake(connection: raw)
        let thread = Thread { handshake.run() }
        thread.name = "dbus-hello"
        thread.start()
        let timedOut =
            handshake.done.wait(timeout: .now() + .milliseconds(Int(clamping: timeout.milliseconds))) == .timedOut
        if timedOut {
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
            handshake.done.wait()
        }
        guard !timedOut, handshake.failure == nil else {
            cdbus_connection_close(raw)
            cdbus_connection_unref(raw)
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            throw DBusError.connectionFailed(
                address: address,
                reason: timedOut
                    ? "the bus did not complete the D-Bus handshake within \(seconds.formatted()) s (it accepts "
                        + "connections but does not answer, or answers what is not D-Bus)"
                    : handshake.failure ?? "")
        }
        pointer = raw
    }

    /// `cdbus_bus_register` on a thread of its own; `done` is signalled when it returns.
    private final class Handshake: @unchecked Sendable {
        let connection: OpaquePointer
        let done = DispatchSemaphore(value: 0)
        /// Written by the thread before `done` is signalled; read after.
        private(set) var failure: String?

        init(connection: OpaquePointer) { self.connection = connection }

        func run() {
            var error = CDBus.DBusError()
            cdbus_error_init(&error)
            if cdbus_bus_register(connection, &error) == 0 { failure = RawConnection.describe(&error) }
            cdbus_error_free(&error)
            done.signal()
        }
    }

    /// The unique name the bus gave this connection, e.g. `:1.42`.
    var uniqueName: String {
        cdbus_bus_get_unique_name(pointer).map { String(cString: $0) } ?? ""
    }

    /// The socket, for polling.
    var fileDescriptor: Int32 {
        var fd: Int32 = -1
        _ = cdbus_connection_get_unix_fd(pointer, &fd)
        return fd
    }

    var isConnected: Bool { cdbus_connection_get_is_connected(pointer) != 0 }
    var hasMessagesToSend: Bool { cdbus_connection_has_messages_to_send(pointer) != 0 }

    /// Whether the peer accepted Unix file descriptors during authentication.
    var canPassFileDescriptors: Bool { cdbus_connection_can_send_type(pointer, CDBUS_TYPE_UNIX_FD) != 0 }

    /// Queues `message` (and writes it at once if the socket allows); returns its serial.
    func send(_ message: Message) throws -> UInt32 {
        if cdbus_message_contains_unix_fds(message.pointer) != 0, !canPassFileDescriptors {
            throw DBusError.invalidArgument(
                "this bus connection cannot pass file descriptors (not a Unix socket, or the bus refused them)")
        }
        var serial: UInt32 = 0
        guard cdbus_connection_send(pointer, message.pointer, &serial) != 0 else { throw DBusError.outOfMemory }
        return serial
    }

    /// Reads and writes whatever the socket allows without blocking; false once disconnected.
    func readWrite() -> Bool {
        cdbus_connection_read_write(pointer, 0) != 0
    }

    /// The next received message, if any.
    func popMessage() -> Message? {
        cdbus_connection_pop_message(pointer).map { Message(owning: $0) }
    }

    /// Closes the socket (once); the pointer stays valid until `deinit`.
    func close() {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        cdbus_connection_close(pointer)
    }

    deinit {
        close()
        cdbus_connection_unref(pointer)
    }

    fileprivate static func describe(_ error: inout CDBus.DBusError) -> String {
        guard cdbus_error_is_set(&error) != 0 else { return "unknown error" }
        let name = error.name.map { String(cString: $0) } ?? ""
        let message = error.message.map { String(cString: $0) } ?? ""
        return "\(name): \(message)"
    }
}
