/// Which adapter flashes which board of a class, and when: the waves a connection limit makes,
/// and each board's pace on the radio it shares.
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
/// board that meets the others in their quiet parts is not slowed by their busy ones.
///
/// Each adapter's controller creates one connection at a time (`Advertising`): of the boards
/// that start on an adapter at once, the one connected `position`-th begins its flow
/// `CreationWait.first` later than alone, and waits again at its slowest connection (a board
/// restarted in pairing mode, after its first `Flow.slowestAfterParts` parts) until the
/// controller has made the connections ahead of it: it goes on no earlier than its start plus
/// `CreationWait.slowest` plus its time alone before that connection, and cannot end before its
/// start plus `slowest` plus its whole time alone.
public enum ClassSchedule {
    /// One board's flow: its parts (`RadioDemand.Part`: each with its time alone and its air time).
    public struct Flow: Sendable, Equatable {
        public var parts: [RadioDemand.Part]
        /// How many of its parts come before its slowest connection (0: that is its first).
        public var slowestAfterParts: Int

        public init(parts: [RadioDemand.Part], slowestAfterParts: Int = 0) {
            self.parts = parts
            self.slowestAfterParts = min(max(slowestAfterParts, 0), parts.count)
        }

        /// Its time alone.
        public var alone: Duration { parts.reduce(.zero) { $0 + $1.duration } }
    }

    /// How much longer than alone a board waits for its connections in a batch asked to
    /// connect at once: for its first (`first`), and for its slowest (`slowest`).
    public struct CreationWait: Sendable, Equatable {
        public var first: Duration
        public var slowest: Duration

        public init(first: Duration, slowest: Duration) {
            self.first = first
            self.slowest = slowest
        }

        /// No wait.
        public static let none = CreationWait(first: .zero, slowest: .zero)
    }

    /// Schedules the boards `flows` over `adapters` (one unlimited adapter when empty).
    public static func schedule(
        _ flows: [Flow], adapters given: [ClassEstimator.Adapter],
        creationWait: (_ board: Int, _ position: Int, _ batch: Int) -> CreationWait = { _, _, _ in .none }
    ) -> [ClassEstimate.Board] {
        let adapters = given.isEmpty ? [ClassEstimator.Adapter.unlimited] : given
        let parts = flows.map { f in f.parts.map { Part(alone: $0.duration.seconds, air: $0.air.seconds) } }
        var runs: [Int: Run] = [:]
        var out: [ClassEstimate.Board?] = Array(repeating: nil, count: flows.count)
        var waiting = Array(flows.indices)
        var now = 0.0
        func on(_ a: Int) -> Int { runs.values.filter { $0.adapter == a }.count }
        func room(_ a: Int) -> Bool { adapters[a].connectionLimit.map { on(a) < $0 } ?? true }
        while !waiting.isEmpty || !runs.isEmpty {
            // Start every waiting board that finds room, on the adapter with the fewest boards.
            var started: [(board: Int, adapter: Int)] = []
            while let next = waiting.first {
                guard let a = adapters.indices.filter(room).min(by: { on($0) < on($1) }) else { break }
                waiting.removeFirst()
                started.append((next, a))
                runs[next] = Run(board: next, adapter: a, start: now)
            }
            for (board, a) in started {
                let batch = started.filter { $0.adapter == a }
                let position = batch.firstIndex { $0.board == board } ?? 0
                let wait = creationWait(board, position, batch.count)
                let flow = flows[board]
                let before = flow.parts.prefix(flow.slowestAfterParts).reduce(Duration.zero) { $0 + $1.duration }
                runs[board]!.flowsFrom = now + wait.first.seconds
                runs[board]!.notBefore = now + (wait.slowest + flow.alone).seconds
                if wait.slowest > wait.first, flow.slowestAfterParts > 0 {
                    runs[board]!.pauseBefore = flow.slowestAfterParts
                    runs[board]!.resumesFrom = now + (wait.slowest + before).seconds
                }
                runs[board]!.enter(0, parts[board])
            }
            // Each flowing board's speed: 1, or 1 / the adapter's demand when the radio is full.
            var speed: [Int: Double] = [:]
            for a in adapters.indices {
                let flowing = runs.values.filter { $0.adapter == a && $0.flowsFrom <= now && !$0.done(parts) }
                let demand = flowing.reduce(0.0) { $0 + $1.share(parts) }
                for run in flowing { speed[run.board] = run.share(parts) > 0 && demand > 1 ? 1 / demand : 1 }
            }
            // The next moment something changes: a part ends, a flow begins again, a board may finish.
            var next = Double.infinity
            for run in runs.values {
                if run.flowsFrom > now { next = min(next, run.flowsFrom) }
                if let v = speed[run.board] { next = min(next, now + run.left / v) }
                if run.done(parts) { next = min(next, max(run.notBefore, now)) }
            }
            guard next.isFinite else { break }
            for (board, v) in speed {
                runs[board]!.left -= (next - now) * v
                if runs[board]!.left <= 1e-9 {
                    let part = runs[board]!.part + 1
                    runs[board]!.enter(part, parts[board])
                    if part == runs[board]!.pauseBefore {
                        runs[board]!.flowsFrom = max(next, runs[board]!.resumesFrom)
                        runs[board]!.pauseBefore = nil
                    }
                }
            }
            now = next
            for run in runs.values where run.done(parts) && run.notBefore <= now + 1e-9 {
                out[run.board] = ClassEstimate.Board(
                    index: run.board, adapter: run.adapter, wave: 0, start: .seconds(run.start),
                    duration: .microseconds(Int64(((max(now, run.notBefore) - run.start) * 1_000_000).rounded())))
                runs[run.board] = nil
            }
        }
        // Number the waves on each adapter: its first `limit` boards to start are its first
        // wave, the next `limit` its second... (all one wave with no limit). Alike boards finish
        // a little apart, each freeing a place for the next, so start times alone would not tell.
        var result = out.compactMap { $0 }
        for a in adapters.indices {
            let order = result.indices.filter { result[$0].adapter == a }
                .sorted { (result[$0].start, result[$0].index) < (result[$1].start, result[$1].index) }
            let size = adapters[a].connectionLimit ?? max(order.count, 1)
            for (position, i) in order.enumerated() { result[i].wave = position / size + 1 }
        }
        return result
    }

    /// A part in seconds: its time alone and its air time.
    struct Part {
        var alone: Double
        var air: Double
        /// Its share of the radio alone.
        var share: Double { alone > 0 ? min(air / alone, 1) : 0 }
    }

    /// A started board: when its flow goes on, the part it is in and that part's time alone
    /// still to go, where it pauses for its slowest connection, and the earliest it can end.
    struct Run {
        var board: Int
        var adapter: Int
        var start: Double
        var flowsFrom = 0.0
        var notBefore = 0.0
        var part = 0
        var left = 0.0
        var pauseBefore: Int?
        var resumesFrom = 0.0

        func done(_ parts: [[Part]]) -> Bool { part >= parts[board].count }
        func share(_ parts: [[Part]]) -> Double { done(parts) ? 0 : parts[board][part].share }

        /// Enters part `index`, skipping parts that take no time.
        mutating func enter(_ index: Int, _ mine: [Part]) {
            part = index
            while part < mine.count, mine[part].alone <= 0, part != pauseBefore { part += 1 }
            left = part < mine.count ? mine[part].alone : 0
        }
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
