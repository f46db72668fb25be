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
