import Foundation
internal import CDBus
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// The shared state of one connection and its dispatch thread.
///
/// One thread per connection polls the socket (plus an eventfd used to wake it), lets libdbus
/// read and write without blocking, and routes every received message: replies to waiting
/// calls, signals to subscriptions, method calls to exported objects. Other threads send
/// directly: libdbus writes at once because the dispatch thread never holds its I/O lock
/// while it sleeps in `poll`.
final class ConnectionCore: Sendable {
    let raw: RawConnection
    let uniqueName: String
    let state = Mutex(CoreState())
    private let wakeFD: Int32
    private let stopped = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    let incoming: AsyncStream<Message>.Continuation
    /// Longest sleep of the dispatch thread when nothing happens (timeouts are checked after it).
    static let idlePoll: Duration = .milliseconds(100)

    init(address: String, timeout: Duration) throws {
        raw = try RawConnection(address: address, timeout: timeout)
        uniqueName = raw.uniqueName
        wakeFD = cdbus_make_wakeup_fd()
        guard wakeFD >= 0 else {
            raw.close()
            throw DBusError.connectionFailed(address: address, reason: "cannot create an eventfd (errno \(errno))")
        }
        let (calls, continuation) = AsyncStream<Message>.makeStream(bufferingPolicy: .unbounded)
        incoming = continuation
        let thread = Thread { [self] in runLoop() }
        thread.name = "dbus-dispatch"
        thread.start()
        // Incoming method calls are answered one at a time, in arrival order, except on
        // paths exported as concurrent (calls that may wait, such as a BLE connect).
        Task { [self] in
            for await call in calls {
                let concurrent = state.withLock { $0.concurrentPaths.contains(call.path ?? "/") }
                if concurrent {
                    Task { await answer(call) }
                } else {
                    await answer(call)
                }
            }
        }
    }

    deinit {
        Glibc.close(wakeFD)
    }

    /// Wakes the dispatch thread (to notice a new deadline or a stop request).
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Stops the dispatch thread, fails everything waiting, and closes the socket. Idempotent.
    func close() {
        if stopRequested.exchange(true, ordering: .acquiringAndReleasing) { return }
        state.withLock { $0.closed = true }
        wake()
        stopped.wait()
        raw.close()
    }

    private func runLoop() {
        let fd = raw.fileDescriptor
        while !stopRequested.load(ordering: .acquiring) {
            let connected = raw.readWrite()
            while let message = raw.popMessage() { route(message) }
            guard connected, raw.isConnected else { break }
            let wait = expireTimeouts(now: .now)
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN) | (raw.hasMessagesToSend ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
            ]
            _ = poll(&fds, 2, Int32(clamping: wait.milliseconds))
            if fds[1].revents != 0 {
                var value: UInt64 = 0
                _ = Glibc.read(wakeFD, &value, MemoryLayout<UInt64>.size)
            }
        }
        finishEverything()
        stopped.signal()
    }

    /// Fails waiting calls and ends every stream: the connection is gone.
    private func finishEverything() {
        let (calls, subscriptions) = state.withLock { state in
            state.closed = true
            let calls = Array(state.pending.values)
            let subscriptions = Array(state.subscriptions.values)
            state.pending.removeAll()
            state.tickets.removeAll()
            state.subscriptions.removeAll()
            return (calls, subscriptions)
        }
        for call in calls { call.continuation.resume(throwing: DBusError.disconnected) }
        for subscription in subscriptions { subscription.continuation.finish() }
        incoming.finish()
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, at least 0.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(0, ms)
    }
}
