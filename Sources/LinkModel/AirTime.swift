/// The connection-event model of the link layer.
///
/// A connection exchanges packets only in connection events at `anchor + k·CI`.
/// A packet handed to the stack at time t leaves in the first event strictly after t
/// (handed exactly at an event time means during that event: it waits for the next).
/// In one event the central sends at most `packetsPerEvent` link-layer packets and the
/// peripheral answers each with one packet (data or empty), up to as many data packets.
///
/// Air time on the 1M PHY: a packet of `p` payload bytes takes (1 preamble + 4 access
/// address + 2 header + p + 3 CRC) × 8 µs = (10 + p) × 8 µs; an empty packet 80 µs.
/// Each exchange is central packet, 150 µs inter-frame space, peripheral packet,
/// 150 µs inter-frame space. An event with no data still takes one empty exchange.
/// An event holds no more exchanges than fit before the connection's next event
/// (CI − 150 µs), whatever `packetsPerEvent` allows.
/// Events of different connections on one adapter never overlap: an event whose
/// slot is taken is pushed back until the radio is free. Only events that carry data
/// (or a pending empty answer) are simulated; idle connections' empty events are not
/// modelled and take no air time.
public enum AirTime {
    /// Inter-frame space, µs.
    public static let interFrameSpace: Int64 = 150

    /// On-air time of a link-layer packet with `payload` bytes, µs.
    public static func packet(payload: Int) -> Int64 { Int64(10 + payload) * 8 }

    /// One exchange: a central packet and the peripheral's answer, with both spaces, µs.
    public static func exchange(central: Int, peripheral: Int) -> Int64 {
        packet(payload: central) + interFrameSpace + packet(payload: peripheral) + interFrameSpace
    }

    /// Link-layer payload bytes of an ATT PDU carrying `value` bytes
    /// (4 bytes L2CAP header + 1 opcode + 2 handle).
    public static func writePDU(value: Int) -> Int { value + 7 }

    /// The link-layer packet sizes an L2CAP PDU of `bytes` is split into.
    public static func fragments(bytes: Int, dataLength: Int) -> [Int] {
        let size = max(dataLength, 27)
        var out: [Int] = []
        var left = bytes
        repeat {
            out.append(min(left, size))
            left -= size
        } while left > 0
        return out
    }
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
        if logsSlots { slots.append(AirSlot(start: start.microseconds, end: freeAt.microseconds, connection: connection)) }
    }
}

/// The air time one connection event occupied, in µs of virtual time.
public struct AirSlot: Sendable, Equatable, Codable {
    public var start: Int64
    public var end: Int64
    public var connection: Int
}
