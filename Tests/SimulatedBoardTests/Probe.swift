import Transport

/// A small test flow whose behaviour is a closure over a log of what it saw.
struct Probe: FlowMachine {
    struct Seen: Sendable, Equatable {
        var events: [String] = []
        var notifications: [[UInt8]] = []
        var connectFailures = 0
        var counter = 0
    }

    typealias Step = @Sendable (inout Seen, FlowEvent, Duration) -> [FlowAction]
    let step: Step
    private(set) var seen = Seen()
    private(set) var outcome: Result<Seen, any Error>? = nil

    init(_ step: @escaping Step) { self.step = step }

    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start: seen.events.append("start")
        case let .notification(_, b): seen.notifications.append(b); seen.events.append("notification")
        case let .timerFired(id): seen.events.append("timer \(id)")
        case let .disconnected(r): seen.events.append("disconnected \(r)")
        case .connected: seen.events.append("connected")
        case .connectFailed: seen.connectFailures += 1; seen.events.append("connect failed")
        case .writeFailed: seen.events.append("write failed")
        }
        let actions = step(&seen, event, now)
        if actions.contains(.finish) { outcome = .success(seen) }
        return actions
    }
}
