import LinkModel

/// What one board's flash asks of the adapter's radio, part by part: each part of its
/// estimate (`PathEstimate.parts`, same names and durations) with the air time its
/// connection events take (`AirTime`).
///
/// A part's duration is what it takes a board alone on the adapter; its air time is how long
/// the radio is busy with that board's events during it. The adapter has one radio and its
/// connections' events never overlap (`AirTime`, `RadioArbiter`), so `n` boards in the same
/// part at once need at least `n` times the air time: see `ClassEstimator`.
public struct RadioDemand: Sendable, Equatable {
    /// One part: its duration alone and its air time.
    public struct Part: Sendable, Equatable {
        public var name: String
        public var duration: Duration
        public var air: Duration
        public init(name: String, duration: Duration, air: Duration) {
            self.name = name
            self.duration = duration
            self.air = air
        }
    }

    public var path: EstimatedPath
    public var parts: [Part]
    /// How the board advertises for its first connection and for the slowest to connect of its
    /// connections (nil: connecting costs nothing beyond the parts), and the link's connection
    /// interval: boards asked to connect through one adapter at once get their connections one
    /// after another (`Advertising.creations`).
    public var firstConnecting: Advertising?
    public var connecting: Advertising?
    /// Its other connections after the first (a read-back, a bootloader), which the controller
    /// also creates one at a time.
    public var laterConnecting: [Advertising]
    public var connectionInterval: Duration
    /// How many of its parts come before it asks for its slowest connection (partial
    /// flashing's first connection and memory-map read, before its restart in pairing mode);
    /// 0 when the slowest is its first.
    public var slowestAfterParts = 0

    public init(
        path: EstimatedPath, parts: [Part], firstConnecting: Advertising? = nil, connecting: Advertising? = nil,
        laterConnecting: [Advertising] = [], connectionInterval: Duration = .zero
    ) {
        self.path = path
        self.parts = parts
        self.firstConnecting = firstConnecting ?? connecting
        self.connecting = connecting
        self.laterConnecting = laterConnecting
        self.connectionInterval = connectionInterval
    }

    /// How much longer than alone the board created `position`-th of `batch` boards asked to
    /// connect at once waits for its first connection (`first`), and for the slowest of its
    /// connections (`slowest`), never less than nothing. Before its slowest, the controller
    /// also creates the other connections of the boards ahead of it (in a large class their
    /// read-backs come first), each one advertising interval and one connection interval.
    public func creationWait(position: Int, of batch: Int) -> ClassSchedule.CreationWait {
        let ahead = laterConnecting.reduce(Duration.zero) { $0 + $1.interval + connectionInterval }
        return ClassSchedule.CreationWait(
            first: Self.wait(firstConnecting, position, batch, connectionInterval),
            slowest: Self.wait(connecting, position, batch, connectionInterval) + (batch > 1 ? ahead * position : .zero)
        )
    }

    /// Its flow for `ClassSchedule`: the parts with their air time.
    public var flow: ClassSchedule.Flow {
        ClassSchedule.Flow(parts: parts, slowestAfterParts: slowestAfterParts)
    }

    static func wait(_ advertising: Advertising?, _ position: Int, _ batch: Int, _ interval: Duration) -> Duration {
        guard let advertising, batch > 1 else { return .zero }
        let times = advertising.creations(of: batch, connectionInterval: interval)
        guard times.indices.contains(position) else { return .zero }
        return max(times[position] - advertising.creation(connectionInterval: interval), .zero)
    }

    /// The board's time alone on the adapter (the path estimate's `seconds`).
    public var alone: Duration { parts.reduce(.zero) { $0 + $1.duration } }
    /// The board's whole air time.
    public var air: Duration { parts.reduce(.zero) { $0 + $1.air } }

    /// The estimate's parts with the air time `air(name)` gives each (zero when nil).
    init(_ estimate: PathEstimate, air: (String) -> Int64?) {
        self.init(
            path: estimate.path,
            parts: estimate.parts.map {
                Part(
                    name: $0.name, duration: .microseconds(Int64(($0.seconds * 1_000_000).rounded())),
                    air: .microseconds(air($0.name) ?? 0))
            })
    }
}

/// Air time of the exchanges a flow makes, from the link model (`AirTime`).
///
/// Every write the central hands to the link goes in link-layer packets of at most the data
/// length; each packet is one exchange with the board's empty answer (central packet, 150 µs,
/// peripheral packet, 150 µs). The board's notification or ATT response is one exchange with
/// the central's empty packet. An event that carries nothing else still takes one empty exchange.
enum ExchangeAir {
    /// The exchanges of a write of `value` bytes (ATT and L2CAP headers added), µs.
    static func write(_ value: Int, dataLength: Int) -> Int64 {
        AirTime.fragments(bytes: AirTime.writePDU(value: value), dataLength: dataLength)
            .reduce(0) { $0 + AirTime.exchange(central: $1, peripheral: 0) }
    }

    /// The exchange of the board's notification of `value` bytes, µs.
    static func answer(_ value: Int, dataLength: Int) -> Int64 {
        AirTime.fragments(bytes: AirTime.writePDU(value: value), dataLength: dataLength)
            .reduce(0) { $0 + AirTime.exchange(central: 0, peripheral: $1) }
    }

    /// A request and its answer, each in its own event.
    static func roundTrip(request: Int, answer: Int, dataLength: Int) -> Int64 {
        write(request, dataLength: dataLength) + Self.answer(answer, dataLength: dataLength)
    }

    /// The partial-flashing round trips of the memory-map read: STATUS (`EE`, 3-byte answer)
    /// and REGION_INFO 1 and 2 (2 bytes, 20-byte answers).
    static func memoryMapRead(dataLength: Int) -> Int64 {
        roundTrip(request: 1, answer: 3, dataLength: dataLength)
            + 2 * roundTrip(request: 2, answer: 20, dataLength: dataLength)
    }
}
