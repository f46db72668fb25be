/// Which adapter flashes which board of a class, and when: the waves a connection limit makes.
///
/// The policy (the one a class flash over several adapters is to follow): each adapter keeps
/// at most its connection limit of boards connected. At the start the boards are spread over
/// the adapters, each board to the adapter with the fewest boards so far that still has room
/// (the first such adapter on a tie). A board that finds no room waits; when boards finish, the waiting boards
/// start on the adapters that freed up first, in the order the boards were given.
///
/// A board's time depends on how many boards share its adapter (`time(board, sharing)`); it
/// is taken with the number of boards on its adapter once the boards starting at the same
/// moment have started (a wave of alike boards shares the radio for its whole run). Each
/// adapter's controller creates one connection at a time (`Advertising`): of the boards that
/// start on an adapter at once, the one connected `position`-th waits `creationWait` longer
/// than alone for its first and for its slowest connection, and takes the longer of its
/// slowest wait plus its time alone and its first wait plus its time sharing the radio (the
/// boards connected first still send when it starts). A batch's creations are taken to be
/// over before the next batch starts (a flow outlasts them).
public enum ClassSchedule {
    /// Schedules `boards` boards over `adapters` (one unlimited adapter when empty).
    public static func schedule(
        boards: Int, adapters given: [ClassEstimator.Adapter],
        creationWait: (_ board: Int, _ position: Int, _ batch: Int) -> (first: Duration, slowest: Duration) = {
            _, _, _ in (.zero, .zero)
        },
        time: (_ board: Int, _ sharing: Int) -> Duration
    ) -> [ClassEstimate.Board] {
        let adapters = given.isEmpty ? [ClassEstimator.Adapter.unlimited] : given
        var out: [ClassEstimate.Board?] = Array(repeating: nil, count: max(boards, 0))
        var running: [[Int]] = Array(repeating: [], count: adapters.count)
        var waiting = Array(0..<max(boards, 0))
        var now = Duration.zero
        func room(_ a: Int) -> Bool { adapters[a].connectionLimit.map { running[a].count < $0 } ?? true }
        while !waiting.isEmpty || running.contains(where: { !$0.isEmpty }) {
            // Start every waiting board that finds room, on the adapter with the fewest boards.
            var started: [(board: Int, adapter: Int)] = []
            while let next = waiting.first {
                let free = adapters.indices.filter(room)
                guard let a = free.min(by: { running[$0].count < running[$1].count }) else { break }
                waiting.removeFirst()
                running[a].append(next)
                started.append((next, a))
            }
            for (board, a) in started {
                let batch = started.filter { $0.adapter == a }
                let position = batch.firstIndex { $0.board == board } ?? 0
                let wait = creationWait(board, position, batch.count)
                // The longer of: waiting for the slowest of its connections, then its time alone;
                // or waiting for its first connection, then sharing the radio with the whole wave
                // (the boards connected before it are still sending when it starts).
                let d = max(wait.slowest + time(board, 1), wait.first + time(board, running[a].count))
                out[board] = ClassEstimate.Board(
                    index: board, adapter: a, wave: 0, start: now, duration: d)
            }
            // The next moment boards finish: they leave their adapters.
            let finishes = running.flatMap { $0 }.compactMap { out[$0]?.finish }
            guard let first = finishes.min() else { break }
            now = first
            for a in running.indices {
                running[a].removeAll { out[$0]?.finish == first }
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
