import Transport

/// How far a session got, counted from the reports its flows make: the retries the stream
/// announced, the payload bytes the progress reports counted (64 per partial-flashing block), and
/// the path it was on. A finished session's outcome carries its own figures; these are for the
/// result of a session that failed, which would otherwise say nothing of what it did.
public struct SessionProgress: Sendable, Equatable {
    public internal(set) var retries = 0
    /// Bytes counted in the phases before the current one.
    private var earlierBytes = 0
    /// The most the current phase has counted.
    private var phaseBytes = 0
    /// The path the session was on when it failed (nil before it chose one).
    public internal(set) var path: FlashPath?
    /// True when partial flashing had given up and a full update followed.
    public internal(set) var fallback = false
    /// The protocol of the full update under way, if any.
    public internal(set) var fullPath: FullUpdatePath?

    public init() {}

    /// Payload bytes written so far.
    public var bytesSent: Int { earlierBytes + phaseBytes }

    /// Counts the reports among `actions`.
    mutating func observe(_ actions: [FlowAction]) {
        for case let .report(report) in actions {
            switch report {
            case .retry: retries += 1
            case let .flow(r) where r.kind == .retry: retries += 1
            case .phase:
                earlierBytes += phaseBytes
                phaseBytes = 0
            case let .progress(done, _, unit):
                phaseBytes = max(phaseBytes, done * (unit == .bytes ? 1 : 64))
            default: break
            }
        }
    }
}
