import Transport

/// Replays the board's side of a recorded run against a flow: every event the flow was told
/// (the trace's `input` lines: connections, notifications, timers, link losses) is told again
/// in order at its recorded time, and everything the flow asks for on the link (writes,
/// subscriptions, connection attempts, disconnects) must match what the recording shows
/// between that input and the next. Flows are pure state machines, so a client that behaves
/// as the recorded one matches line for line; the first line where it does not is the
/// divergence. A user's trace of a failed flash thus becomes a test of the client.
public enum TraceReplay {
    /// One line of a recording, as read from a trace file.
    public struct Line: Sendable, Equatable {
        /// The line number in its file (from 1).
        public var number: Int
        /// Microseconds since the start of the run.
        public var t: Int64
        public var kind: String
        public var text: String
        public init(number: Int, t: Int64, kind: String, text: String) {
            self.number = number
            self.t = t
            self.kind = kind
            self.text = text
        }
    }

    /// Where the replayed flow first did something else than the recorded one.
    public struct Divergence: Sendable, Equatable, CustomStringConvertible {
        /// The recording's line where the difference shows (the input line when the flow
        /// sent something the recording does not have there).
        public var line: Int
        /// What the recording shows, and what the replayed flow did (`kind text`).
        public var recorded: String
        public var replayed: String
        public var description: String {
            "line \(line): the recording has \(recorded), the client \(replayed)"
        }
    }

    /// What a replay found.
    public struct Report<Machine: FlowMachine>: Sendable {
        /// The flow after the replay (its `outcome` is set when it finished).
        public var machine: Machine
        /// Inputs told to the flow, and recorded outputs it matched.
        public var inputs: Int
        public var matched: Int
        /// Nil when the flow did exactly what the recording shows.
        public var divergence: Divergence?
    }

    /// The trace kinds of what a flow asks for on the link.
    static let outputKinds: Set<String> = [
        TraceKind.write.rawValue, TraceKind.subscribe.rawValue,
        TraceKind.connect.rawValue, TraceKind.disconnect.rawValue
    ]

    /// A flow action as its trace line would show it (kind, text); nil for actions not on the link.
    static func line(of action: FlowAction) -> (kind: String, text: String)? {
        switch action {
        case let .write(_, bytes, kind): return (TraceKind.write.rawValue, "\(kind.rawValue) \(bytes.hexString)")
        case let .subscribe(ch): return (TraceKind.subscribe.rawValue, "\(ch.characteristic)")
        case let .connect(after, target):
            return (TraceKind.connect.rawValue, "connect after \(after.secondsText)\(Simulation.targetText(target))")
        case .disconnect: return (TraceKind.disconnect.rawValue, Simulation.closeText)
        default: return nil
        }
    }

    /// True for a recorded line the flow itself caused on the link.
    static func isOutput(_ l: Line) -> Bool {
        guard outputKinds.contains(l.kind) else { return false }
        switch l.kind {
        case TraceKind.connect.rawValue: return l.text.hasPrefix("connect after ")
        case TraceKind.disconnect.rawValue: return l.text == Simulation.closeText
        default: return true
        }
    }

    /// Replays `lines` (one board's, in file order) against `machine`.
    public static func run<Machine: FlowMachine>(_ machine: Machine, lines: [Line]) -> Report<Machine> {
        var machine = machine
        let inputs = lines.filter { $0.kind == TraceKind.input.rawValue }
        let outputs = lines.filter(isOutput)
        var report = Report(machine: machine, inputs: 0, matched: 0, divergence: nil)
        guard let first = inputs.first else {
            report.divergence = Divergence(
                line: lines.first?.number ?? 0,
                recorded: "no input lines (record the trace with this version of bitflash)",
                replayed: "cannot be replayed")
            return report
        }
        // Outputs recorded before the first input cannot come from the flow.
        var next = outputs.firstIndex { $0.number > first.number } ?? outputs.count
        for (k, input) in inputs.enumerated() {
            guard machine.outcome == nil else { break }
            guard let event = RecordedEvent.decode(input.text) else {
                report.divergence = Divergence(
                    line: input.number, recorded: "input '\(input.text)'", replayed: "cannot read it")
                break
            }
            let bound = k + 1 < inputs.count ? inputs[k + 1].number : Int.max
            report.inputs += 1
            let actions = machine.handle(event, now: .microseconds(input.t))
            var sent: [(kind: String, text: String)] = []
            for action in actions {
                if action == .finish { break }
                if let l = line(of: action) { sent.append(l) }
            }
            for s in sent {
                guard next < outputs.count, outputs[next].number < bound else {
                    report.divergence = Divergence(
                        line: input.number,
                        recorded: "nothing more sent after input '\(input.text)'",
                        replayed: "sent \(s.kind) \(s.text)")
                    break
                }
                let o = outputs[next]
                guard o.kind == s.kind, o.text == s.text else {
                    report.divergence = Divergence(
                        line: o.number, recorded: "\(o.kind) \(o.text)", replayed: "sent \(s.kind) \(s.text)")
                    break
                }
                next += 1
                report.matched += 1
            }
            if report.divergence != nil { break }
            if next < outputs.count, outputs[next].number < bound {
                let o = outputs[next]
                report.divergence = Divergence(
                    line: o.number, recorded: "\(o.kind) \(o.text)",
                    replayed: "sent nothing more after input '\(input.text)'")
                break
            }
        }
        report.machine = machine
        return report
    }
}
