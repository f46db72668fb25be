import Synchronization
import Transport

/// How fast a phase's progress goes on this link, measured as the flash runs: blocks (partial
/// flashing) or bytes (full updates) per second over the last few seconds, and the time the
/// phase's rest takes at that rate.
///
/// It follows the connection as it is, whatever the link profile says: a link with a longer
/// interval than the profile's, radio time shared with other boards, or retries all show up
/// in it.
public struct ProgressRate: Sendable, Equatable {
    /// Units per second (`unit`).
    public var perSecond: Double
    public var unit: ProgressUnit
    /// At this rate, the time until the phase's last unit is done.
    public var remaining: Duration

    public init(perSecond: Double, unit: ProgressUnit, remaining: Duration) {
        self.perSecond = perSecond
        self.unit = unit
        self.remaining = remaining
    }
}

/// Measures each board's progress rate from its progress reports and attaches it to the
/// events it makes (`FlashEvent.rate`). Drivers (simulated, BlueZ, UDP) make their events
/// through one meter, so every user of the library gets the measured rate.
///
/// The rate is taken over a window of the last `window` of time (at least two reports, the
/// oldest at least `minimumSpan` before the newest): recent enough to follow a link that
/// changes, long enough to smooth the per-block jitter of connection events. It starts again
/// at every phase, and when progress goes back (a resend from an earlier block).
public final class ProgressRateMeter: Sendable {
    private struct Sample {
        var elapsed: Duration
        var done: Int
    }

    private struct Board {
        var samples: [Sample] = []
        var unit: ProgressUnit = .bytes
        var total = 0
    }

    public let window: Duration
    public let minimumSpan: Duration
    private let boards = Mutex<[String: Board]>([:])

    public init(window: Duration = .seconds(3), minimumSpan: Duration = .milliseconds(200)) {
        self.window = window
        self.minimumSpan = minimumSpan
    }

    /// The event for `report` of `board` at `elapsed`, with the measured rate on progress reports.
    public func event(board: String, elapsed: Duration, report: FlowReport) -> FlashEvent {
        FlashEvent(board: board, elapsed: elapsed, report: report, rate: record(board, elapsed, report))
    }

    private func record(_ name: String, _ elapsed: Duration, _ report: FlowReport) -> ProgressRate? {
        boards.withLock { boards in
            var b = boards[name] ?? Board()
            defer { boards[name] = b }
            switch report {
            case .phase:
                b = Board()
                return nil
            case let .progress(done, total, unit):
                if unit != b.unit || total != b.total || (b.samples.last.map { done < $0.done } ?? false) {
                    b = Board(unit: unit, total: total)
                }
                b.samples.append(Sample(elapsed: elapsed, done: done))
                // Keep one sample older than the window, so the window is always covered.
                while b.samples.count > 2, elapsed - b.samples[1].elapsed >= window { b.samples.removeFirst() }
                guard let first = b.samples.first, let last = b.samples.last, last.done > first.done,
                    last.elapsed - first.elapsed >= minimumSpan
                else { return nil }
                let perSecond = Double(last.done - first.done) / (last.elapsed - first.elapsed).seconds
                let left = Double(max(total - done, 0)) / perSecond
                return ProgressRate(
                    perSecond: perSecond, unit: unit, remaining: .microseconds(Int64((left * 1_000_000).rounded())))
            default:
                return nil
            }
        }
    }
}
