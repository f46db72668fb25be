import Diagnostics

/// The parameters of a simulated BLE link between this computer (the central) and a board.
///
/// Figures and sources (docs/protocols/link-model.md):
/// - connection interval: Linux kernel central default 30 ms (`le_conn_min_interval` 0x18);
///   the board asks for 10–20 ms (CODAL/DAL PPCP), granted as 15 ms; BLE minimum 7.5 ms.
/// - packets per event each way: 6 (Nordic SoftDevice GAP event length 6 × 1.25 ms).
/// - ATT MTU and LL data length: the central's maximum; the link uses the smaller of the
///   central's and the board's values.
/// - connection setup: 1.0 s for connect plus service discovery of a lone board (an
///   assumption, used for every path alike); boards asked at once through one adapter are
///   connected one at a time (`Advertising`).
/// - supervision timeout: 4 s (what the board asks for, CODAL PPCP).
/// - connect timeout: 20 s before an attempt on a board that does not advertise fails
///   (an assumption of the order of the Linux LE connection-attempt timeout; not verified).
public struct LinkProfile: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The profile's name, as the benchmark prints it.
    public var name: String
    /// Time between two connection events, in microseconds (a multiple of 1250).
    public var connectionIntervalMicroseconds: Int64
    /// Link-layer data packets the central may send per event (the board may answer with as many).
    public var packetsPerEvent: Int
    /// The central's ATT MTU.
    public var attMTU: Int
    /// The central's LL data length (payload bytes of one link-layer packet).
    public var dataLength: Int
    /// Connect plus service discovery.
    public var connectionSetup: Duration
    /// A link with no packet for this long is declared lost.
    public var supervisionTimeout: Duration
    /// How long a connection attempt waits for a board that does not advertise before it fails.
    public var connectTimeout: Duration

    public init(
        name: String, connectionIntervalMicroseconds: Int64, packetsPerEvent: Int = 6,
        attMTU: Int = 247, dataLength: Int = 251, connectionSetup: Duration = .seconds(1),
        supervisionTimeout: Duration = .seconds(4), connectTimeout: Duration = .seconds(20)
    ) {
        self.name = name
        self.connectionIntervalMicroseconds = connectionIntervalMicroseconds
        self.packetsPerEvent = packetsPerEvent
        self.attMTU = attMTU
        self.dataLength = dataLength
        self.connectionSetup = connectionSetup
        self.supervisionTimeout = supervisionTimeout
        self.connectTimeout = connectTimeout
    }

    /// The connection interval.
    public var connectionInterval: Duration { .microseconds(connectionIntervalMicroseconds) }

    /// BlueZ as a central with no parameter update: 30 ms.
    public static let linuxDefault = LinkProfile(name: "linux-default", connectionIntervalMicroseconds: 30_000)
    /// What the board asks for (10–20 ms), granted as 15 ms.
    public static let deviceRequested = LinkProfile(name: "device-requested", connectionIntervalMicroseconds: 15_000)
    /// The BLE minimum: 7.5 ms.
    public static let fast = LinkProfile(name: "fast", connectionIntervalMicroseconds: 7_500)

    /// The named profiles the benchmark reports.
    public static let named: [LinkProfile] = [.linuxDefault, .deviceRequested, .fast]

    /// A profile with a custom connection interval in microseconds.
    /// - Throws: `LinkModelError.badConnectionInterval` unless it is a multiple of 1.25 ms in 7.5 ms…1998.75 ms:
    ///   BLE allows up to 4 s, but the board asks for a 4 s supervision timeout (CODAL PPCP), which must be
    ///   larger than twice the interval (Bluetooth Core Vol 6 Part B §4.5.2).
    public static func custom(connectionIntervalMicroseconds us: Int64) throws -> LinkProfile {
        guard (7_500...1_998_750).contains(us), us % 1_250 == 0 else {
            throw LinkModelError.badConnectionInterval(microseconds: us)
        }
        return LinkProfile(
            name: "custom-\(Duration.microseconds(us).millisecondsText)ms", connectionIntervalMicroseconds: us)
    }

    /// Looks up a profile by name (`linux-default`, `device-requested`, `fast`) or by a
    /// connection interval in milliseconds (`ci=11.25`, `11.25ms`, `11.25`).
    public init(named text: String) throws {
        let t = text.lowercased()
        if let p = Self.named.first(where: { $0.name == t }) {
            self = p
            return
        }
        var number = t.hasPrefix("ci=") ? String(t.dropFirst(3)) : t
        if number.hasSuffix("ms") { number = String(number.dropLast(2)) }
        guard let ms = Double(number), ms.isFinite, ms > 0, ms < 10_000 else {
            throw LinkModelError.unknownProfile(text)
        }
        self = try Self.custom(connectionIntervalMicroseconds: Int64((ms * 1000).rounded()))
    }

    public var description: String {
        "\(name) (CI \(connectionInterval.millisecondsText) ms, \(packetsPerEvent) packets/event)"
    }
}

extension Duration {
    /// Milliseconds without trailing zeros, e.g. `7.5`, `30`.
    public var millisecondsText: String {
        let us = wholeMicroseconds
        var text = String(us / 1000)
        let rest = (us % 1000).magnitude
        if rest != 0 {
            var frac = String(rest)
            frac = String(repeating: "0", count: 3 - frac.count) + frac
            while frac.hasSuffix("0") { frac.removeLast() }
            text += "." + frac
        }
        return text
    }

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

/// The one error type of the link model.
public enum LinkModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A connection interval outside what BLE allows.
    case badConnectionInterval(microseconds: Int64)
    /// A profile name that is neither a named profile nor an interval.
    case unknownProfile(String)
    /// A fault probability outside 0…1.
    case badProbability(name: String, value: Double)
    /// An adapter profile that is neither named nor a number of connections in 1…64.
    case unknownAdapter(String)

    public var description: String {
        switch self {
        case let .badConnectionInterval(us):
            return "connection interval \(Duration.microseconds(us).millisecondsText) ms is not one a board "
                + "takes: use a multiple of 1.25 ms between 7.5 ms and 1998.75 ms (the board's 4 s supervision "
                + "timeout must exceed twice the interval)"
        case let .unknownProfile(name):
            return
                "unknown link profile '\(name)': use linux-default, device-requested, fast or an interval such as 11.25ms"
        case let .badProbability(name, value):
            return "fault probability \(name) = \(value) is outside 0…1: give a value such as 0.01"
        case let .unknownAdapter(name):
            return "unknown adapter profile '\(name)': use csr8510, bcm20702, cyw43455 (or pi), unknown, "
                + "a name with a limit such as csr8510:3, or a number of connections in 1…64"
        }
    }
}

extension LinkModelError: DomainError {
    /// A link or fault setting that cannot be: the request is wrong, not the board.
    public var failureKind: FailureKind { .invalidRequest }
}
