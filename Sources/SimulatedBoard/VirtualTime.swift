/// Virtual time for the simulator: integer microseconds since the simulation began.
///
/// The simulator never sleeps and never reads a real clock. Time advances only
/// when the event loop jumps to the next scheduled event, so a run is exactly
/// reproducible: the same inputs and seed give the same times to the microsecond.
public struct VirtualInstant: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Microseconds since the start of the simulation.
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// The start of every simulation.
    public static let zero = VirtualInstant(microseconds: 0)

    public static func < (a: VirtualInstant, b: VirtualInstant) -> Bool { a.microseconds < b.microseconds }

    /// The instant `d` later (durations are truncated to whole microseconds).
    public static func + (a: VirtualInstant, d: Duration) -> VirtualInstant {
        VirtualInstant(microseconds: a.microseconds + d.wholeMicroseconds)
    }

    /// The time from `b` to `a`.
    public static func - (a: VirtualInstant, b: VirtualInstant) -> Duration {
        .microseconds(a.microseconds - b.microseconds)
    }

    /// The instant `us` microseconds later.
    public func advanced(byMicroseconds us: Int64) -> VirtualInstant {
        VirtualInstant(microseconds: microseconds + us)
    }

    /// Seconds with six decimals, e.g. `1.030000s`.
    public var description: String { Duration.microseconds(microseconds).secondsText }
}

/// The timing of one connection's events.
public struct ConnectionSchedule: Sendable, Equatable {
    /// The first event (the moment the connection is established).
    public let anchor: VirtualInstant
    /// Microseconds between events.
    public let interval: Int64

    public init(anchor: VirtualInstant, interval: Int64) {
        self.anchor = anchor
        self.interval = max(interval, 1)
    }

    /// The first event strictly after `t`.
    public func firstEvent(after t: VirtualInstant) -> VirtualInstant {
        let since = t.microseconds - anchor.microseconds
        guard since >= 0 else { return anchor }
        let k = since / interval + 1
        return anchor.advanced(byMicroseconds: k * interval)
    }
}

/// The adapter's one radio, shared by all its connections.
public struct RadioArbiter: Sendable, Equatable {
    /// The radio is busy until this instant.
    public private(set) var freeAt: VirtualInstant = .zero
    /// Every event's air slot, for checks (start, end, connection).
    public private(set) var slots: [AirSlot] = []
    /// Keep the slot log (tests); off by default to keep long runs lean.
    public var logsSlots = false

    public init() {}

    /// When an event planned for `t` can start.
    public func start(plannedAt t: VirtualInstant) -> VirtualInstant { max(t, freeAt) }

    /// Marks the radio busy for `airTime` µs from `start`.
    public mutating func reserve(from start: VirtualInstant, airTime: Int64, connection: Int) {
        freeAt = start.advanced(byMicroseconds: airTime)
        if logsSlots {
            slots.append(AirSlot(start: start.microseconds, end: freeAt.microseconds, connection: connection))
        }
    }
}

/// The air time one connection event occupied, in µs of virtual time.
public struct AirSlot: Sendable, Equatable, Codable {
    public var start: Int64
    public var end: Int64
    public var connection: Int
}
