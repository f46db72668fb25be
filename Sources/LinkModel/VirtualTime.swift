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

extension Duration {
    /// The duration in whole microseconds, truncated toward zero.
    public var wholeMicroseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }

    /// Seconds with six decimals, e.g. `0.015000s`, stable across platforms.
    public var secondsText: String {
        let us = wholeMicroseconds
        let sign = us < 0 ? "-" : ""
        let a = us.magnitude
        let frac = String(a % 1_000_000)
        return "\(sign)\(a / 1_000_000).\(String(repeating: "0", count: 6 - frac.count))\(frac)s"
    }
}
