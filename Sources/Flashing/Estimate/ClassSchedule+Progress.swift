import LinkModel

/// The class moving through time: boards starting within their adapters' limits, flowing at the
/// pace the shared radio leaves them, and stopping for the connections their controllers make
/// one at a time (`ClassSchedule`).
extension ClassSchedule {
    /// One step of a board's flow: work at its own pace (time alone and air time, in seconds,
    /// and the share of the radio it asks when not its air over its time: `Part.asks`), or a
    /// connection to wait for.
    enum Step: Equatable {
        case work(alone: Double, air: Double, asks: Double? = nil)
        case connect(Advertising)

        /// A flow's steps: each part, a part that makes a connection cut where the board asks
        /// for it. Of the connection's setup, the controller's creation for a lone board is what
        /// the board waits for, and the rest runs at its own pace with no air time; the part's
        /// air goes after the setup, or before it when the part ends with it.
        static func steps(of flow: Flow) -> [Step] {
            var steps: [Step] = []
            for part in flow.parts {
                let alone = part.duration.seconds, air = part.air.seconds
                guard let connection = part.connection else {
                    let idle = part.idle.seconds
                    steps.append(.work(alone: alone - idle, air: air, asks: part.asks))
                    steps.append(.work(alone: idle, air: 0, asks: part.asks))
                    continue
                }
                let before = max(connection.after.seconds, 0)
                let setup = min(max(connection.setup.seconds, 0), alone - before)
                let creation = min(
                    connection.advertising.creation(connectionInterval: flow.connectionInterval).seconds, setup)
                let after = alone - before - setup
                // A part that ends with its setup sends before it, in its first events (an entry's
                // write and the drop that follows), then waits for the board's reset.
                let sending = after > 0 ? 0 : min(before, 2 * flow.connectionInterval.seconds)
                steps.append(.work(alone: sending, air: after > 0 ? 0 : air))
                steps.append(.work(alone: before - sending, air: 0))
                steps.append(.connect(connection.advertising))
                steps.append(.work(alone: setup - creation, air: 0))
                steps.append(.work(alone: after, air: after > 0 ? air : 0))
            }
            return steps
        }
    }

    /// A started board: the step it is in, and for work the time alone still to go.
    struct Run {
        var board: Int
        var adapter: Int
        var start: Double
        var step = 0
        var left = 0.0
    }

    /// One adapter's controller: the boards waiting for a connection, in the order they asked,
    /// and the creation under way (its board and when it ends).
    struct Controller {
        var waiting: [(board: Int, advertising: Advertising)] = []
        var creating: (board: Int, until: Double)?
    }

    /// The whole class from its start until its last board ends.
    struct Progress {
        let flows: [Flow]
        let adapters: [ClassEstimator.Adapter]
        let steps: [[Step]]
        var runs: [Int: Run] = [:]
        var controllers: [Controller]
        var waiting: [Int]
        var out: [ClassEstimate.Board?]
        var now = 0.0

        init(flows: [Flow], adapters: [ClassEstimator.Adapter]) {
            self.flows = flows
            self.adapters = adapters
            steps = flows.map(Step.steps(of:))
            controllers = Array(repeating: Controller(), count: adapters.count)
            waiting = Array(flows.indices)
            out = Array(repeating: nil, count: flows.count)
        }

        func on(_ a: Int) -> Int { runs.values.filter { $0.adapter == a }.count }
        func room(_ a: Int) -> Bool { adapters[a].connectionLimit.map { on(a) < $0 } ?? true }

        mutating func run() {
            while true {
                startWaitingBoards()
                if finishEndedBoards() { continue }
                if runs.isEmpty { return }
                for a in adapters.indices { startCreation(on: a) }
                // Each working board's speed: 1, or 1 / the adapter's demand when the radio is full.
                var speed: [Int: Double] = [:]
                for a in adapters.indices {
                    let working = runs.values.compactMap { $0.adapter == a ? ask(of: $0) : nil }
                    let demand = working.reduce(0.0) { $0 + $1.share }
                    for w in working { speed[w.board] = w.sends && demand > 1 ? 1 / demand : 1 }
                }
                // The next moment something changes: a step ends, a connection is made.
                var next = Double.infinity
                for (board, v) in speed { next = min(next, now + runs[board]!.left / v) }
                for c in controllers { if let creating = c.creating { next = min(next, creating.until) } }
                guard next.isFinite else { return }
                for board in speed.keys.sorted() {
                    runs[board]!.left -= (next - now) * speed[board]!
                    if runs[board]!.left <= 1e-9 { enter(board, step: runs[board]!.step + 1) }
                }
                now = next
                for a in adapters.indices {
                    guard let creating = controllers[a].creating, creating.until <= now + 1e-9 else { continue }
                    controllers[a].creating = nil
                    enter(creating.board, step: runs[creating.board]!.step + 1)
                }
            }
        }

        /// What a working board's step asks of the radio: its share (its air over its time alone,
        /// or the part's `asks`), and whether it has exchanges to make, which a full radio slows;
        /// nil while it waits for a connection.
        func ask(of run: Run) -> (board: Int, share: Double, sends: Bool)? {
            guard run.step < steps[run.board].count, case let .work(alone, air, asks) = steps[run.board][run.step]
            else {
                return nil
            }
            return (run.board, asks ?? (alone > 0 ? min(air / alone, 1) : 0), air > 0)
        }

        /// Starts every waiting board that finds room, on the adapter with the fewest boards.
        mutating func startWaitingBoards() {
            while let next = waiting.first {
                guard let a = adapters.indices.filter(room).min(by: { on($0) < on($1) }) else { return }
                waiting.removeFirst()
                runs[next] = Run(board: next, adapter: a, start: now)
                enter(next, step: 0)
            }
        }

        /// Enters step `index` of `board`'s flow, past steps that take no time; a connection step
        /// puts the board in its controller's queue.
        mutating func enter(_ board: Int, step index: Int) {
            var i = index
            while i < steps[board].count, case let .work(alone, _, _) = steps[board][i], alone <= 0 { i += 1 }
            runs[board]!.step = i
            guard i < steps[board].count else { return }
            switch steps[board][i] {
            case let .work(alone, _, _): runs[board]!.left = alone
            case let .connect(advertising):
                runs[board]!.left = 0
                controllers[runs[board]!.adapter].waiting.append((board, advertising))
            }
        }

        /// A free controller creates the connection of the waiting board heard first: the one
        /// that advertises most often (the first to ask of equals).
        mutating func startCreation(on a: Int) {
            guard controllers[a].creating == nil else { return }
            let intervals = controllers[a].waiting.map(\.advertising.interval)
            guard let chosen = intervals.indices.min(by: { intervals[$0] < intervals[$1] }) else { return }
            let board = controllers[a].waiting.remove(at: chosen).board
            let created = Advertising.firstHeard(among: intervals) + intervals[chosen] + flows[board].connectionInterval
            controllers[a].creating = (board, now + created.seconds)
        }

        /// Ends the boards past their last step; true when one ended (a place may have freed).
        mutating func finishEndedBoards() -> Bool {
            let ended = runs.values.filter { $0.step >= steps[$0.board].count }
            for run in ended {
                out[run.board] = ClassEstimate.Board(
                    index: run.board, adapter: run.adapter, wave: 0, start: .seconds(run.start),
                    duration: .microseconds(Int64(((now - run.start) * 1_000_000).rounded())))
                runs[run.board] = nil
            }
            return !ended.isEmpty
        }
    }
}
