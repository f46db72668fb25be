import Transport

/// Reads the fuzz input as a stream of small decisions. Past the end it returns zeros,
/// so every input is a complete script.
public struct ByteSource {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { position >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Up to `limit` bytes, the count taken from the stream first.
    public mutating func bytes(upTo limit: Int) -> [UInt8] {
        let count = Int(byte()) % (limit + 1)
        return (0..<count).map { _ in byte() }
    }
}

/// What a driver owes a flow: the timers it started and the link requests it made.
/// `drain` plays the patient but unlucky driver: it fires the earliest timer and fails
/// every reconnection, which must end any flow.
public struct DriverBook {
    public private(set) var now: Duration = .zero
    public private(set) var timers: [TimerID: Duration] = [:]
    public private(set) var connectPending = false
    public private(set) var disconnectPending = false
    public private(set) var finished = false

    public init() {}

    /// Books the actions a flow returned.
    public mutating func record(_ actions: [FlowAction]) {
        for action in actions {
            switch action {
            case let .startTimer(id, after): timers[id] = now + after
            case let .cancelTimer(id): timers[id] = nil
            case .connect: connectPending = true
            case .disconnect: disconnectPending = true
            case .finish:
                precondition(!finished, "a flow emitted finish twice")
                finished = true
            default: break
            }
        }
        if let index = actions.firstIndex(of: .finish) {
            precondition(index == actions.count - 1, "finish is not the last action: \(actions)")
        }
    }

    /// A timer chosen by `selector` (running ones first), advancing the clock to it.
    public mutating func takeTimer(_ selector: UInt8, known: [TimerID]) -> TimerID {
        let running = timers.sorted { $0.value < $1.value }
        if selector & 0x80 == 0, !running.isEmpty {
            let (id, at) = running[Int(selector) % running.count]
            timers[id] = nil
            now = max(now, at)
            return id
        }
        // A stale or unknown timer: drivers may race a cancel against a firing.
        now += .milliseconds(Int(selector))
        return known[Int(selector) % known.count]
    }

    public mutating func advance(_ milliseconds: UInt8) { now += .milliseconds(Int(milliseconds)) }

    public mutating func tookConnect() { connectPending = false }
    public mutating func tookDisconnect() { disconnectPending = false }

    /// The next event of a driver whose board stopped answering, or nil when nothing is owed
    /// (a flow that is not finished then waits forever: a livelock).
    public mutating func drainEvent() -> FlowEvent? {
        if disconnectPending {
            disconnectPending = false
            return .disconnected(.localTerminated)
        }
        if connectPending {
            connectPending = false
            return .connectFailed(.connectFailed("the board does not answer"))
        }
        guard let (id, at) = timers.min(by: { $0.value < $1.value }) else { return nil }
        timers[id] = nil
        now = max(now, at)
        return .timerFired(id)
    }
}

/// `precondition` that keeps its message in release builds, so a fuzz crash says which
/// invariant broke.
@inline(__always)
public func require(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { fatalError(message(), file: file, line: line) }
}
