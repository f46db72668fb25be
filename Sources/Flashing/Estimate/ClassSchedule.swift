import LinkModel

/// Which adapter flashes which board of a class, and when: the waves a connection limit makes,
/// each board's pace on the radio it shares, and the connections its controller makes one at
/// a time.
///
/// The policy (the one a class flash over several adapters is to follow): each adapter keeps
/// at most its connection limit of boards connected. At the start the boards are spread over
/// the adapters, each board to the adapter with the fewest boards so far that still has room
/// (the first such adapter on a tie). A board that finds no room waits; when boards finish, the
/// waiting boards start on the adapters that freed up first, in the order the boards were given.
///
/// A board moves through its flow part by part (`Flow.parts`: each part's time alone and the
/// air time its connection events take). At each moment the boards in their flows on one
/// adapter ask the radio for the sum of their parts' shares (air over time alone). While that
/// fits (at most 1), each board keeps its pace alone; when it does not, the radio is busy all
/// the time and every board whose part has air moves at 1 / that sum of its pace alone (its
/// connection events wait for the others'), while parts without air (a reboot, an erase the
/// radio sits out) keep their time. So `n` boards alike in one part take `max(d, n · a)`, and a
/// board that meets the others in their quiet parts is not slowed by their busy ones. A part
/// may ask for more than its air over its time (`RadioDemand.Part.asks`): Secure DFU's object
/// loop, whose boards fall into step, asks for its packets' share through its erases too.
///
/// A part that makes a connection (`RadioDemand.Part.connection`) stops the board where it asks
/// for it, until its adapter's controller has created it (`Advertising`): one at a time, each
/// time to the waiting board heard first, taken to be the one that advertises most often (the
/// first to ask of equals), after the least of the waiting boards' phases
/// (`Advertising.firstHeard`), that board's next advertisement and one connection interval.
/// The rest of the part's setup then runs at the board's own pace. So a board restarted in
/// pairing mode (200 ms) waits for every board still waiting in application mode (50 ms), and a
/// board entering its bootloader (25 ms) goes before both.
public enum ClassSchedule {
    /// One board's flow: its parts (`RadioDemand.Part`: each with its time alone, its air time
    /// and the connection it makes) on a link of `connectionInterval`.
    public struct Flow: Sendable, Equatable {
        public var parts: [RadioDemand.Part]
        public var connectionInterval: Duration

        public init(parts: [RadioDemand.Part], connectionInterval: Duration = .zero) {
            self.parts = parts
            self.connectionInterval = connectionInterval
        }

        /// Its time alone.
        public var alone: Duration { parts.reduce(.zero) { $0 + $1.duration } }
    }

    /// Schedules the boards `flows` over `adapters` (one unlimited adapter when empty).
    public static func schedule(_ flows: [Flow], adapters given: [ClassEstimator.Adapter]) -> [ClassEstimate.Board] {
        let adapters = given.isEmpty ? [ClassEstimator.Adapter.unlimited] : given
        var state = Progress(flows: flows, adapters: adapters)
        state.run()
        // Number the waves on each adapter: its first `limit` boards to start are its first
        // wave, the next `limit` its second... (all one wave with no limit). Alike boards finish
        // a little apart, each freeing a place for the next, so start times alone would not tell.
        var result = state.out.compactMap { $0 }
        for a in adapters.indices {
            let order = result.indices.filter { result[$0].adapter == a }
                .sorted { (result[$0].start, result[$0].index) < (result[$1].start, result[$1].index) }
            let size = adapters[a].connectionLimit ?? max(order.count, 1)
            for (position, i) in order.enumerated() { result[i].wave = position / size + 1 }
        }
        return result
    }
}

/// A class set's estimate: each board's adapter, wave, start and time, and the whole class's time.
public struct ClassEstimate: Sendable, Equatable {
    /// One board of the class.
    public struct Board: Sendable, Equatable {
        /// Its position in the class (the order the boards were given).
        public var index: Int
        /// The adapter it is flashed through (an index into `adapters`).
        public var adapter: Int
        /// 1 for the boards that start at once, 2 for those that start when the first ones finish...
        public var wave: Int
        /// From the start of the class.
        public var start: Duration
        /// Its own time, from its start until it runs the new program.
        public var duration: Duration
        /// When it runs the new program, from the start of the class.
        public var finish: Duration { start + duration }
    }

    public var boards: [Board]
    public var adapters: [ClassEstimator.Adapter]

    /// From the start until the last board runs its new program.
    public var classTime: Duration { boards.map(\.finish).max() ?? .zero }
    /// The longest time of one board.
    public var slowestBoard: Duration { boards.map(\.duration).max() ?? .zero }
    /// The number of waves on the adapter that needs the most.
    public var waves: Int { boards.map(\.wave).max() ?? 0 }
}
