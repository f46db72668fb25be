import Synchronization

/// The reply to a call sent with ``DBusConnection/send(destination:path:interface:method:arguments:timeout:)``:
/// the call has left (in order with the others) when the handle exists; ``reply()`` waits for
/// the answer, and any number of tasks may wait.
public final class DBusPendingReply: Sendable {
    private enum Phase {
        case waiting([UInt64: CheckedContinuation<Message, any Error>])
        case done(Result<Message, any Error>)
    }

    private struct Book {
        var phase: Phase = .waiting([:])
        var nextID: UInt64 = 0
    }

    /// `interface.method on path`, for messages.
    public let label: String
    private let book = Mutex(Book())

    init(label: String) {
        self.label = label
    }

    /// True once the reply (or a failure) has arrived.
    public var isDone: Bool {
        book.withLock { if case .done = $0.phase { return true } else { return false } }
    }

    func complete(_ result: Result<Message, any Error>) {
        let waiters = book.withLock { b -> [CheckedContinuation<Message, any Error>] in
            guard case .waiting(let waiters) = b.phase else { return [] }
            b.phase = .done(result)
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// The reply body.
    /// - Throws: as ``DBusConnection/call(destination:path:interface:method:arguments:timeout:)``;
    ///   cancelling the waiting task stops the wait (not the call).
    public func reply() async throws -> [DBusValue] {
        let message = try await message()
        if message.isError { throw message.remoteError() }
        return try message.arguments()
    }

    private func message() async throws -> Message {
        let id = book.withLock { b -> UInt64 in
            b.nextID += 1
            return b.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message, any Error>) in
                let done: Result<Message, any Error>? = book.withLock { b in
                    switch b.phase {
                    case .done(let result): return result
                    case .waiting(var waiters):
                        if Task.isCancelled { return .failure(CancellationError()) }
                        waiters[id] = continuation
                        b.phase = .waiting(waiters)
                        return nil
                    }
                }
                if let done { continuation.resume(with: done) }
            }
        } onCancel: {
            let waiter = book.withLock { b -> CheckedContinuation<Message, any Error>? in
                guard case .waiting(var waiters) = b.phase, let w = waiters.removeValue(forKey: id) else { return nil }
                b.phase = .waiting(waiters)
                return w
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
