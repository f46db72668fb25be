import Flashing
import Foundation
import SimulatedBoard
import SimulatedFlashing

/// A flash recorded in a trace file, played back to the client (`bitflash-lab sim replay`): every
/// event of one board's recording is told again to a new `SessionFlow`, which must ask for the
/// same writes, subscriptions and connections, and end as the recording ended.
public enum FlashReplay {
    /// The trace's header (its `meta` line); nil when it has none or it cannot be read.
    public static func header(of lines: [TraceFile.Line]) -> TraceHeader? {
        guard let meta = lines.first(where: { $0.kind == "meta" }) else { return nil }
        return try? JSONDecoder().decode(TraceHeader.self, from: Data(meta.text.utf8))
    }

    /// The names of the boards the trace records, sorted.
    public static func boards(in lines: [TraceFile.Line]) -> [String] {
        Array(Set(lines.filter { $0.board >= 0 }.map(\.name))).sorted()
    }

    /// What a replay found.
    public struct Outcome: Sendable {
        /// The replay of the board's events: inputs told, outputs matched, the first divergence.
        public var report: TraceReplay.Report<SessionFlow>
        /// How the recording says the flash ended (its `result` line), if it says.
        public var recorded: TraceResult?
        /// How the replayed client ended; nil when the recording ends before it did.
        public var replayed: TraceResult?

        /// True when the client ended as the recording did: the same path and reason code,
        /// failed or not alike (or the recording has no result; or both are unfinished failures).
        public var endedAsRecorded: Bool {
            switch (recorded, replayed) {
            case let (e?, r?): return e.path == r.path && e.code == r.code && (e.error == nil) == (r.error == nil)
            case let (e?, nil): return e.error != nil
            case (nil, _): return true
            }
        }
    }

    /// Replays board `name`'s lines of `lines` to a session of `plan` with `options`.
    public static func run(_ lines: [TraceFile.Line], board name: String, plan: FlashPlan, options: FlashOptions)
        -> Outcome
    {
        let recorded = lines.enumerated().filter { $0.element.name == name }.map {
            TraceReplay.Line(number: $0.offset + 1, t: $0.element.t, kind: $0.element.kind, text: $0.element.text)
        }
        let report = TraceReplay.run(SessionFlow(plan: plan, options: options), lines: recorded)
        let expected = lines.first { $0.kind == "result" && $0.name == name }
            .flatMap { try? JSONDecoder().decode(TraceResult.self, from: Data($0.text.utf8)) }
        let replayed: TraceResult? = report.machine.outcome.map {
            TraceResult(FlashResult(board: name, outcome: $0, seconds: 0))
        }
        return Outcome(report: report, recorded: expected, replayed: replayed)
    }
}
