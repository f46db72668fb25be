/// Which adapter flashes which board of a class, and when: the waves a connection limit makes.
///
/// The policy (the one a class flash over several adapters is to follow): each adapter keeps
/// at most its connection limit of boards connected. At the start the boards are spread over
/// the adapters, each board to the adapter with the fewest boards so far that still has room
/// (the first such adapter on a tie). A board that finds no room waits; when boards finish, the
/// waiting boards start on the adapters that freed up first, in the order the boards were given.
///
/// A board's time depends on which boards share its adapter (`time(board, sharing)`: its whole
/// flow with those boards beside it all along). The set changes as boards start and finish, so
/// each board moves through its flow at the pace of the boards beside it at the moment: with
/// `sharing` on the adapter, a board covers `dt / time(board, sharing)` of its flow in `dt`. A
/// board that starts when most of a wave is about to end is thus slowed only while they last,
/// and the last boards of a wave speed up as the others leave.
///
/// Each adapter's controller creates one connection at a time (`Advertising`): of the boards
/// that start on an adapter at once, the one connected `position`-th starts its flow
/// `creationWait.first` later than alone, and cannot end before its slowest wait plus its time
/// alone (the boards connected first still send when it starts). A batch's creations are taken
/// to be over before the next batch starts (a flow outlasts them).
public enum ClassSchedule {
    /// Schedules `boards` boards over `adapters` (one unlimited adapter when empty), with a
    /// board's time given by how many boards share its adapter.
    public static func schedule(
        boards: Int, adapters: [ClassEstimator.Adapter],
        creationWait: (_ board: Int, _ position: Int, _ batch: Int) -> (first: Duration, slowest: Duration) = {
            _, _, _ in (.zero, .zero)
        },
        time: (_ board: Int, _ sharing: Int) -> Duration
    ) -> [ClassEstimate.Board] {
        schedule(boards: boards, adapters: adapters, creationWait: creationWait) { time($0, $1.count) }
    }

    /// Schedules `boards` boards over `adapters` (one unlimited adapter when empty), with a
    /// board's time given by the boards that share its adapter (itself included).
    public static func schedule(
        boards: Int, adapters given: [ClassEstimator.Adapter],
        creationWait: (_ board: Int, _ position: Int, _ batch: Int) -> (first: Duration, slowest: Duration) = {
            _, _, _ in (.zero, .zero)
        },
        sharingTime time: (_ board: Int, _ sharing: [Int]) -> Duration
    ) -> [ClassEstimate.Board] {
        let adapters = given.isEmpty ? [ClassEstimator.Adapter.unlimited] : given
        var runs: [Int: Run] = [:]
        var out: [ClassEstimate.Board?] = Array(repeating: nil, count: max(boards, 0))
        var waiting = Array(0..<max(boards, 0))
        var now = 0.0
        func on(_ a: Int) -> [Int] { runs.values.filter { $0.adapter == a }.map(\.board).sorted() }
        func room(_ a: Int) -> Bool { adapters[a].connectionLimit.map { on(a).count < $0 } ?? true }
        while !waiting.isEmpty || !runs.isEmpty {
            // Start every waiting board that finds room, on the adapter with the fewest boards.
            var started: [(board: Int, adapter: Int)] = []
            while let next = waiting.first {
                let free = adapters.indices.filter(room)
                guard let a = free.min(by: { on($0).count < on($1).count }) else { break }
                waiting.removeFirst()
                started.append((next, a))
                runs[next] = Run(board: next, adapter: a, start: now)
            }
            for (board, a) in started {
                let batch = started.filter { $0.adapter == a }
                let position = batch.firstIndex { $0.board == board } ?? 0
                let wait = creationWait(board, position, batch.count)
                runs[board]?.flowsFrom = now + wait.first.seconds
                let together = batch.map(\.board).sorted()
                runs[board]?.notBefore =
                    now + max(wait.slowest + time(board, [board]), wait.first + time(board, together)).seconds
            }
            // Each flowing board's pace with the boards now on its adapter (those still in their flows).
            var pace: [Int: Double] = [:]
            for a in adapters.indices {
                let sharing = runs.values.filter { $0.adapter == a && $0.progress < 1 }.map(\.board).sorted()
                for board in sharing where runs[board]!.flowsFrom <= now {
                    pace[board] = 1 / max(time(board, sharing).seconds, 1e-9)
                }
            }
            // The next moment something changes: a board's flow begins or ends, or it may finish.
            var next = Double.infinity
            for run in runs.values {
                if run.flowsFrom > now { next = min(next, run.flowsFrom) }
                if let p = pace[run.board] { next = min(next, now + (1 - run.progress) / p) }
                if run.progress >= 1 { next = min(next, max(run.notBefore, now)) }
            }
            guard next.isFinite else { break }
            for (board, p) in pace {
                let ends = now + (1 - runs[board]!.progress) / p
                runs[board]!.progress = ends <= next + 1e-9 ? 1 : runs[board]!.progress + (next - now) * p
            }
            now = next
            for run in runs.values where run.progress >= 1 && run.notBefore <= now + 1e-9 {
                let finish = max(now, run.notBefore)
                out[run.board] = ClassEstimate.Board(
                    index: run.board, adapter: run.adapter, wave: 0, start: .seconds(run.start),
                    duration: .microseconds(Int64(((finish - run.start) * 1_000_000).rounded())))
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

    /// A started board: when its flow begins (after its connection's creation), how far it has
    /// come (0 to 1), and the earliest it can end.
    struct Run {
        var board: Int
        var adapter: Int
        var start: Double
        var flowsFrom = 0.0
        var notBefore = 0.0
        var progress = 0.0
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
