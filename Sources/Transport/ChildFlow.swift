import Diagnostics

/// Runs one flow inside another: the parent feeds it events and gets back its
/// actions, with the child's timers kept apart from the parent's and from other
/// children's, and its `finish` turned into an outcome the parent can act on.
///
/// A composed flow (read the memory map, then partial flashing, then maybe a full
/// update) keeps one `ChildFlow` per step and starts the next step when the
/// previous one has finished.
///
/// Reports pass through as the child made them: a typed report stays the child's value
/// (`AnyFlowReport`), so that the observer of the whole session sees what each step reported.
public struct ChildFlow<Machine: FlowMachine>: Sendable {
    public private(set) var machine: Machine
    /// The prefix that keeps this child's timer ids apart, e.g. `"partial."`.
    public let scope: String
    private var runningTimers: Set<String> = []
    public private(set) var isFinished = false

    public init(_ machine: Machine, scope: String) {
        self.machine = machine
        self.scope = scope
    }

    /// True when `event` belongs to this child: every event except other scopes' timers.
    public func accepts(_ event: FlowEvent) -> Bool {
        if case let .timerFired(id) = event { return id.name.hasPrefix(scope) }
        return true
    }

    /// Feeds one event. Returns the actions to pass on (timers renamed into the
    /// child's scope, `finish` removed) and the outcome once the child has finished.
    /// Timers the child left running when it finished are cancelled.
    public mutating func handle(_ event: FlowEvent, now: Duration) -> (
        actions: [FlowAction], outcome: Result<Machine.Output, any Error>?
    ) {
        guard !isFinished else { return ([], nil) }
        var inner = event
        if case let .timerFired(id) = event {
            guard id.name.hasPrefix(scope) else { return ([], nil) }
            let name = String(id.name.dropFirst(scope.count))
            guard runningTimers.remove(name) != nil else { return ([], nil) }  // stale
            inner = .timerFired(TimerID(name))
        }
        return scoped(machine.handle(inner, now: now))
    }

    /// Runs `body` on the child (a call besides events, such as resuming a paused flow) and
    /// passes its actions on as `handle` does.
    public mutating func perform(_ body: (inout Machine) -> [FlowAction]) -> (
        actions: [FlowAction], outcome: Result<Machine.Output, any Error>?
    ) {
        guard !isFinished else { return ([], nil) }
        return scoped(body(&machine))
    }

    private mutating func scoped(_ actions: [FlowAction]) -> (
        actions: [FlowAction], outcome: Result<Machine.Output, any Error>?
    ) {
        var out: [FlowAction] = []
        var finished = false
        for action in actions {
            switch action {
            case let .startTimer(id, d):
                runningTimers.insert(id.name)
                out.append(.startTimer(TimerID(scope + id.name), d))
            case let .cancelTimer(id):
                runningTimers.remove(id.name)
                out.append(.cancelTimer(TimerID(scope + id.name)))
            case .finish:
                finished = true
            default:
                out.append(action)
            }
        }
        guard finished else { return (out, nil) }
        isFinished = true
        for name in runningTimers.sorted() { out.append(.cancelTimer(TimerID(scope + name))) }
        runningTimers.removeAll()
        return (out, machine.outcome ?? .failure(FlowCompositionError.finishedWithoutOutcome(scope: scope)))
    }
}

/// A flow broke the `FlowMachine` contract.
public enum FlowCompositionError: Error, Equatable, Sendable, CustomStringConvertible {
    case finishedWithoutOutcome(scope: String)
    public var description: String {
        switch self {
        case let .finishedWithoutOutcome(scope): return "internal error: flow \(scope) finished without a result"
        }
    }
}

extension FlowCompositionError: DomainError {
    /// Flows composed the wrong way: a bug, not something the user can fix.
    public var failureKind: FailureKind { .internalFault }
}
