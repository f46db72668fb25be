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
    /// One part: its duration alone and its air time, and the connection it makes, if any.
    public struct Part: Sendable, Equatable {
        public var name: String
        public var duration: Duration
        public var air: Duration
        /// The connection this part makes (nil: none).
        public var connection: Connection?
        /// Time alone at the part's end in which the board has no exchange to make (a reboot):
        /// other boards' events do not slow it.
        public var idle: Duration
        /// The share of the radio the board asks for all through this part, quiet time
        /// included (nil: its air over its time alone outside `idle`). Boards in Secure DFU's
        /// object loop fall into step and send their objects' packets together
        /// (`RadioDemand.alternate`).
        public var asks: Double?

        public init(
            name: String, duration: Duration, air: Duration, connection: Connection? = nil, idle: Duration = .zero,
            asks: Double? = nil
        ) {
            self.name = name
            self.duration = duration
            self.air = air
            self.connection = connection
            self.idle = min(max(idle, .zero), duration)
            self.asks = asks
        }
    }

    /// A connection a part makes: `after` its start (a reboot before it), the board asks for it
    /// advertising as `advertising`; its setup (`LinkProfile.connectionSetup`) takes `setup` of
    /// the part's time alone, with no air time of the board's (the MTU exchange and discovery
    /// run alongside the other boards'), of which the controller's creation
    /// (`Advertising.creation`) is made for one board at a time. The part's air time is spent
    /// after the setup (its reads), or before it when the part ends with the setup (an entry).
    public struct Connection: Sendable, Equatable {
        public var advertising: Advertising
        public var after: Duration
        public var setup: Duration

        public init(advertising: Advertising, after: Duration = .zero, setup: Duration) {
            self.advertising = advertising
            self.after = after
            self.setup = setup
        }
    }

    public var path: EstimatedPath
    public var parts: [Part]
    /// The link's connection interval: a connection's creation ends one interval after the
    /// controller answers the board's advertisement (`Advertising.creation`).
    public var connectionInterval: Duration

    public init(path: EstimatedPath, parts: [Part], connectionInterval: Duration = .zero) {
        self.path = path
        self.parts = parts
        self.connectionInterval = connectionInterval
    }

    /// Its flow for `ClassSchedule`: the parts with their air time and connections.
    public var flow: ClassSchedule.Flow {
        ClassSchedule.Flow(parts: parts, connectionInterval: connectionInterval)
    }

    /// The board's time alone on the adapter (the path estimate's `seconds`).
    public var alone: Duration { parts.reduce(.zero) { $0 + $1.duration } }
    /// The board's whole air time.
    public var air: Duration { parts.reduce(.zero) { $0 + $1.air } }

    /// Marks the part named `name` as making a connection as `advertising`, `after` into it
    /// (nil: where the part ends with one connection setup of `setup`).
    mutating func connects(_ name: String, as advertising: Advertising, after: Duration? = nil, setup: Duration) {
        for i in parts.indices where parts[i].name == name {
            let setup = min(setup, parts[i].duration)
            parts[i].connection = Connection(
                advertising: advertising, after: min(after ?? parts[i].duration - setup, parts[i].duration - setup),
                setup: setup)
        }
    }

    /// Cuts the part at `index` (Secure DFU's Creates and erases: little air, mostly a quiet
    /// wait) and the part after it (the objects' packets) into `count` pairs taken in turn, each
    /// a `count`th of its part, as the protocol alternates them object by object.
    ///
    /// Boards in this loop fall into step: each object's packets wait for the packets of the
    /// boards beside it, and their erases then coincide. So every piece asks the radio for the
    /// packets' share, the quiet ones included; the first part's air goes with the packets, and
    /// its pieces are wholly quiet (the Creates are made while the radio is quiet).
    ///
    /// The two parts make no connection: call it before `connects`. Their own idle time and
    /// shares are replaced by the pieces'.
    mutating func alternate(_ index: Int, count: Int) {
        guard count > 0, index >= 0, parts.indices.contains(index + 1) else { return }
        let quiet = parts[index], sending = parts[index + 1]
        let air = quiet.air + sending.air
        let asks = sending.duration > .zero ? min(air.seconds / sending.duration.seconds, 1) : 0
        /// The `k`th of `count` pieces of `d`, whole microseconds, the first ones one longer.
        func cut(_ d: Duration, _ k: Int) -> Duration {
            let total = d.wholeMicroseconds, n = Int64(count)
            return .microseconds(total / n + (Int64(k) < total % n ? 1 : 0))
        }
        let pieces = (0..<count).flatMap { k in
            let d = cut(quiet.duration, k)
            return [
                Part(name: quiet.name, duration: d, air: .zero, idle: d, asks: asks),
                Part(name: sending.name, duration: cut(sending.duration, k), air: cut(air, k), asks: asks)
            ]
        }
        parts.replaceSubrange(index...(index + 1), with: pieces)
    }

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
