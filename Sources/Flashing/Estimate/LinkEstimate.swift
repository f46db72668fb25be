import LinkModel
import Transport

/// The link parameters an estimate uses: the connection interval, the ATT MTU and what
/// the link layer carries per event, with where the interval came from.
public struct LinkEstimate: Sendable, Equatable, Codable {
    /// Where the connection interval comes from.
    public enum Source: String, Sendable, Equatable, Codable {
        /// Measured from the round trips of the memory-map read on this connection.
        case measured
        /// Reported by the transport.
        case reported
        /// A named link profile (plan mode without a board, or a profile chosen by the user).
        case profile
    }

    /// The link model's profile with this link's interval and MTU.
    public var profile: LinkProfile
    public var source: Source

    public init(profile: LinkProfile, source: Source) {
        self.profile = profile
        self.source = source
    }

    /// A named link profile as it is.
    public static func profile(_ p: LinkProfile) -> LinkEstimate { LinkEstimate(profile: p, source: .profile) }

    /// This connection: the measured interval when the meter has one, else the interval the
    /// transport reported, else `fallback`'s; the negotiated MTU.
    public static func connection(_ info: ConnectionInfo?, meter: IntervalMeter, fallback: LinkProfile) -> LinkEstimate
    {
        var p = fallback
        var source = Source.profile
        if let ci = meter.estimatedInterval {
            p.connectionIntervalMicroseconds = ci.wholeMicroseconds
            source = .measured
        } else if let ci = info?.connectionInterval {
            p.connectionIntervalMicroseconds = max(ci.wholeMicroseconds, 1)
            source = .reported
        }
        if let mtu = info?.mtu, mtu >= 23 { p.attMTU = mtu }
        p.name = source == .profile ? fallback.name : "this connection"
        return LinkEstimate(profile: p, source: source)
    }

    /// The connection interval.
    public var interval: Duration { profile.connectionInterval }

    private enum Key: String, CodingKey { case name, connectionIntervalMilliseconds, attMTU, packetsPerEvent, source }

    /// JSON: `name`, `connectionIntervalMilliseconds`, `attMTU`, `packetsPerEvent`, `source`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(profile.name, forKey: .name)
        try c.encode(Double(profile.connectionIntervalMicroseconds) / 1000, forKey: .connectionIntervalMilliseconds)
        try c.encode(profile.attMTU, forKey: .attMTU)
        try c.encode(profile.packetsPerEvent, forKey: .packetsPerEvent)
        try c.encode(source, forKey: .source)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        var p = LinkProfile.deviceRequested
        p.name = try c.decode(String.self, forKey: .name)
        p.connectionIntervalMicroseconds = Int64(
            (try c.decode(Double.self, forKey: .connectionIntervalMilliseconds) * 1000).rounded())
        p.attMTU = try c.decode(Int.self, forKey: .attMTU)
        p.packetsPerEvent = try c.decode(Int.self, forKey: .packetsPerEvent)
        self.init(profile: p, source: try c.decode(Source.self, forKey: .source))
    }
}

/// Measures the connection interval from request/answer round trips.
///
/// An answer to a request can leave no earlier than the event after the one that carried the
/// request, and the next request leaves in the event after the answer's: on a link that is
/// otherwise idle a round trip takes two connection intervals plus the packets' air time.
/// The meter takes the median of the round trips after the first (the first request of a
/// connection may wait for the link's first event), halves it and rounds to the 1.25 ms grid
/// BLE intervals lie on; round trips across a reconnection are not counted.
///
/// Not the shortest: when other connections share the adapter's radio, an answer's event is
/// pushed back by theirs, and the next request still leaves in the next event on the grid, so
/// one round trip is shortened by the delay of the answer before it and lengthened by the
/// delay of its own answer. The shortest round trip is then short by the longest delay (11.25
/// to 13.75 ms measured on a 15 ms link shared by 16 boards); the delays cancel in the middle
/// of back-to-back round trips.
public struct IntervalMeter: Sendable, Equatable {
    private var sentAt: Duration?
    /// Round-trip times measured so far on the current connection.
    public private(set) var roundTrips: [Duration] = []

    public init() {}

    /// A request was handed to the link at `now` (only the first of a burst counts).
    public mutating func requestSent(at now: Duration) {
        if sentAt == nil { sentAt = now }
    }

    /// An answer arrived at `now`.
    public mutating func answerReceived(at now: Duration) {
        guard let sent = sentAt else { return }
        roundTrips.append(now - sent)
        sentAt = nil
    }

    /// The link was lost or opened again: round trips start over.
    public mutating func linkChanged() {
        sentAt = nil
        roundTrips = []
    }

    /// The connection interval, or nil with fewer than two round trips.
    public var estimatedInterval: Duration? {
        guard roundTrips.count >= 2 else { return nil }
        let later = roundTrips.dropFirst().map(\.wholeMicroseconds).sorted()
        let middle = later.count / 2
        let median = later.count % 2 == 1 ? later[middle] : (later[middle - 1] + later[middle]) / 2
        let half = median / 2
        let grid: Int64 = 1_250
        let rounded = (half + grid / 2) / grid * grid
        return .microseconds(min(max(rounded, 7_500), 4_000_000))
    }
}
