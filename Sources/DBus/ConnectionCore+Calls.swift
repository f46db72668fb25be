/// Everything the dispatch thread and the callers share, behind one lock.
struct CoreState: Sendable {
    var closed = false
    /// Calls sent and waiting for a reply, by serial.
    var pending: [UInt32: PendingCall] = [:]
    /// Where each call of `call(...)` is, by ticket.
    var tickets: [UInt64: TicketPhase] = [:]
    var subscriptions: [UInt64: Subscription] = [:]
    var handlers: [String: DBusMethodHandler] = [:]
    /// Exported paths whose calls are answered concurrently instead of in arrival order.
    var concurrentPaths: Set<String> = []
    /// Exported paths whose handler also answers the paths below them that have no handler.
    var subtreePaths: Set<String> = []

    /// The handler for `path`: its own, else that of the nearest ancestor exported as a subtree.
    func handler(for path: String) -> DBusMethodHandler? {
        if let handler = handlers[path] { return handler }
        var ancestor = path
        while ancestor != "/" {
            ancestor =
                ancestor.lastIndex(of: "/").map { $0 == ancestor.startIndex ? "/" : String(ancestor[..<$0]) } ?? "/"
            if subtreePaths.contains(ancestor), let handler = handlers[ancestor] { return handler }
        }
        return nil
    }
    var nextID: UInt64 = 1

    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}

/// Who waits for a reply: a task suspended in `send`, or a `DBusPendingReply` of `sendNow`.
enum ReplyWaiter: Sendable {
    case task(CheckedContinuation<Message, any Error>)
    case handle(DBusPendingReply)

    func resume(returning reply: Message) {
        switch self {
        case .task(let c): c.resume(returning: reply)
        case .handle(let h): h.complete(.success(reply))
        }
    }

    func resume(throwing error: any Error) {
        switch self {
        case .task(let c): c.resume(throwing: error)
        case .handle(let h): h.complete(.failure(error))
        }
    }
}

/// A call sent and not yet answered.
struct PendingCall: Sendable {
    let ticket: UInt64
    let continuation: ReplyWaiter
    let deadline: ContinuousClock.Instant
    let label: String
    let timeout: Duration
}

/// The life of one `call(...)`: made, sent, or cancelled before it could be sent.
enum TicketPhase: Sendable {
    case new
    case sent(serial: UInt32)
    case cancelled
}

extension ConnectionCore {
    /// Sends `message` and waits for its reply (a method return or an error message).
    ///
    /// Cancelling the calling task resumes it at once with `CancellationError` and forgets the
    /// call; a reply arriving later is dropped. Timeouts are enforced by the dispatch thread.
    func send(_ message: Message, label: String, timeout: Duration) async throws -> Message {
        let ticket = state.withLock { state -> UInt64 in
            let id = state.makeID()
            state.tickets[id] = .new
            return id
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                register(message, ticket: ticket, label: label, timeout: timeout, continuation: .task(continuation))
            }
        } onCancel: {
            cancel(ticket: ticket)
        }
    }

    /// Sends `message` before returning, and hands back what will receive its reply: calls
    /// made this way leave in the order they were made, whoever waits for their replies.
    func sendNow(_ message: Message, label: String, timeout: Duration) -> DBusPendingReply {
        let ticket = state.withLock { state -> UInt64 in
            let id = state.makeID()
            state.tickets[id] = .new
            return id
        }
        let handle = DBusPendingReply(label: label)
        register(message, ticket: ticket, label: label, timeout: timeout, continuation: .handle(handle))
        return handle
    }

    private func register(
        _ message: Message, ticket: UInt64, label: String, timeout: Duration,
        continuation: ReplyWaiter
    ) {
        let failure: (any Error)? = state.withLock { state in
            guard let phase = state.tickets[ticket] else { return CancellationError() }
            if case .cancelled = phase {
                state.tickets[ticket] = nil
                return CancellationError()
            }
            if state.closed {
                state.tickets[ticket] = nil
                return DBusError.disconnected
            }
            do {
                let serial = try raw.send(message)
                state.tickets[ticket] = .sent(serial: serial)
                state.pending[serial] = PendingCall(
                    ticket: ticket, continuation: continuation,
                    deadline: .now + timeout, label: label, timeout: timeout)
                return nil
            } catch {
                state.tickets[ticket] = nil
                return error
            }
        }
        if let failure {
            continuation.resume(throwing: failure)
        } else {
            wake()  // the dispatch thread must learn the new deadline
        }
    }

    private func cancel(ticket: UInt64) {
        let waiting: PendingCall? = state.withLock { state in
            switch state.tickets[ticket] {
            case .new?:
                state.tickets[ticket] = .cancelled
                return nil
            case .sent(let serial)?:
                state.tickets[ticket] = nil
                return state.pending.removeValue(forKey: serial)
            case .cancelled?, nil:
                return nil
            }
        }
        waiting?.continuation.resume(throwing: CancellationError())
    }

    /// Resumes the call that `reply` answers, if it is still waiting.
    func deliverReply(_ reply: Message) {
        let waiting: PendingCall? = state.withLock { state in
            guard let call = state.pending.removeValue(forKey: reply.replySerial) else { return nil }
            state.tickets[call.ticket] = nil
            return call
        }
        waiting?.continuation.resume(returning: reply)
    }

    /// Fails calls whose deadline has passed; returns how long the dispatch thread may sleep.
    func expireTimeouts(now: ContinuousClock.Instant) -> Duration {
        let (expired, next) = state.withLock { state -> ([PendingCall], ContinuousClock.Instant?) in
            var expired: [PendingCall] = []
            var next: ContinuousClock.Instant?
            for (serial, call) in state.pending {
                if call.deadline <= now {
                    expired.append(call)
                    state.pending[serial] = nil
                    state.tickets[call.ticket] = nil
                } else if next.map({ call.deadline < $0 }) ?? true {
                    next = call.deadline
                }
            }
            return (expired, next)
        }
        for call in expired {
            call.continuation.resume(throwing: DBusError.timeout(method: call.label, after: call.timeout))
        }
        guard let next else { return ConnectionCore.idlePoll }
        return min(ConnectionCore.idlePoll, next - now)
    }

    /// How many calls are waiting for a reply.
    var pendingCount: Int {
        state.withLock { max($0.pending.count, $0.tickets.count) }
    }
}
