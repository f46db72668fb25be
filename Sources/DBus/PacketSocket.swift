import Dispatch
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// One end of a Unix `SOCK_SEQPACKET` socket: one `send` is one datagram, one received
/// element is one datagram, and the order is kept.
///
/// This is what BlueZ hands out for `AcquireWrite` and `AcquireNotify` (B566
/// `src/gatt-client.c` `create_sock()`: `socketpair(AF_LOCAL, SOCK_SEQPACKET | SOCK_NONBLOCK |
/// SOCK_CLOEXEC)`; one ATT value per datagram, EOF when the link drops). A fake BlueZ makes
/// the pair itself with ``pair()`` and passes one end in its reply. Kept in this module
/// because it is the one that may call C.
public final class PacketSocket: Sendable {
    /// Why a send failed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The other end is closed (or the socket was closed here).
        case closed
        /// The socket buffer stayed full until the deadline.
        case full
        /// Any other error, with its errno.
        case system(Int32)

        public var description: String {
            switch self {
            case .closed: return "the socket was closed"
            case .full: return "the socket stayed full"
            case .system(let e): return String(cString: strerror(e))
            }
        }
    }

    /// The largest datagram read whole (BlueZ reads its end into 512 bytes, `sock_read()`; an
    /// ATT value is at most 512 bytes, so anything near this size is already not a value).
    public static let maximumDatagram = 8192

    /// The descriptor (-1 once closed) and the reader's dispatch source, which owns the
    /// closing of the descriptor once it exists (Dispatch needs the descriptor open until
    /// the source's cancel handler has run).
    private struct Book {
        var fd: Int32
        var reader: DispatchSourceRead?
    }
    private let book: Mutex<Book>

    /// Takes over a descriptor received over D-Bus; it is made non-blocking.
    public init(_ descriptor: DBusFileDescriptor) throws(Failure) {
        guard let owned = descriptor.take() else { throw .closed }
        let flags = fcntl(owned, F_GETFL)
        _ = fcntl(owned, F_SETFL, flags | O_NONBLOCK)
        book = Mutex(Book(fd: owned))
    }

    private init(owning owned: Int32) {
        book = Mutex(Book(fd: owned))
    }

    deinit { close() }

    /// A connected pair: this end, and the other end as a descriptor to send over D-Bus.
    public static func pair() throws(Failure) -> (PacketSocket, DBusFileDescriptor) {
        var fds: [Int32] = [-1, -1]
        let kind = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else { throw .system(errno) }
        return (PacketSocket(owning: fds[0]), DBusFileDescriptor(taking: fds[1]))
    }

    /// False once closed here.
    public var isOpen: Bool { book.withLock { $0.fd >= 0 } }

    /// Sends one datagram without blocking.
    /// - Throws: `.closed` when the other end is gone, `.full` when the buffer is full now.
    public func trySend(_ bytes: [UInt8]) throws(Failure) {
        let result: Int = book.withLock { b in
            let fd = b.fd
            guard fd >= 0 else { return -2 }
            return bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
        }
        if result >= 0 { return }
        if result == -2 { throw .closed }
        switch errno {
        case EAGAIN, EWOULDBLOCK: throw .full
        case EPIPE, ECONNRESET, ENOTCONN, EBADF: throw .closed
        case let e: throw .system(e)
        }
    }

    /// Sends one datagram, waiting (1 ms at a time) while the buffer is full, up to `timeout`.
    public func send(_ bytes: [UInt8], timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try trySend(bytes)
                return
            } catch .full {
                guard ContinuousClock.now < deadline else { throw Failure.full }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    /// The bytes sent on this end that the other end has not read yet (Linux `SIOCOUTQ` on a
    /// Unix socket: the datagrams still queued for the peer); nil once closed or on an error.
    public var unreadBytes: Int? {
        book.withLock { b -> Int? in
            guard b.fd >= 0 else { return nil }
            var queued: Int32 = 0
            // SIOCOUTQ is TIOCOUTQ (asm-generic/sockios.h, linux/sockios.h).
            guard ioctl(b.fd, UInt(TIOCOUTQ), &queued) == 0 else { return nil }
            return Int(queued)
        }
    }

    /// Waits (1 ms at a time, up to `timeout`) until the other end has read every datagram
    /// sent on this end; true when it has, false on timeout or when the socket is closed.
    public func waitUntilRead(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while let queued = unreadBytes {
            if queued == 0 { return true }
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(1))) != nil else {
                return false
            }
        }
        return false
    }

    /// The datagrams that arrive, in order, until the other end closes (or ``close()``).
    /// Call once: a socket has one reader.
    public func datagrams() -> AsyncStream<[UInt8]> {
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        book.withLock { b in
            guard b.fd >= 0, b.reader == nil else {
                sink.finish()
                return
            }
            let owned = b.fd
            let source = DispatchSource.makeReadSource(
                fileDescriptor: owned, queue: DispatchQueue(label: "packet-socket"))
            source.setEventHandler { [weak self] in
                guard let self, self.drain(into: sink) else {
                    source.cancel()
                    return
                }
            }
            source.setCancelHandler { [weak self] in
                // Cancelled at EOF (the source is still the reader) or by close() (which left
                // the descriptor to this handler): either way it is closed here, once.
                self?.book.withLock { b in
                    if let reader = b.reader,
                        ObjectIdentifier(reader as AnyObject) == ObjectIdentifier(source as AnyObject)
                    {
                        b.reader = nil
                        b.fd = -1
                    }
                }
                _ = Glibc.close(owned)
                sink.finish()
            }
            b.reader = source
            source.resume()
        }
        return stream
    }

    /// Reads every datagram waiting; false at EOF or on an error.
    private func drain(into sink: AsyncStream<[UInt8]>.Continuation) -> Bool {
        var buffer = [UInt8](repeating: 0, count: Self.maximumDatagram)
        while true {
            let (count, error, hangUp): (Int, Int32, Bool) = book.withLock { b in
                let fd = b.fd
                guard fd >= 0 else { return (-1, EBADF, true) }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, 0)
                let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                return (n, n < 0 ? errno : 0, poller.revents & Int16(POLLHUP) != 0)
            }
            if count > 0 {
                sink.yield(Array(buffer[..<count]))
            } else if count == 0 {
                // A SEQPACKET socket reads 0 both for an empty datagram and at EOF; the hang-up
                // flag tells them apart.
                if hangUp { return false }
                sink.yield([])
            } else {
                return error == EAGAIN || error == EWOULDBLOCK || error == EINTR
            }
        }
    }

    /// Closes this end: the other end reads EOF, and `datagrams()` finishes. Idempotent.
    public func close() {
        let (owned, reader) = book.withLock { b -> (Int32, DispatchSourceRead?) in
            defer {
                b.fd = -1
                b.reader = nil
            }
            return (b.fd, b.reader)
        }
        if let reader {
            reader.cancel()
        } else if owned >= 0 {
            _ = Glibc.close(owned)
        }
    }
}
