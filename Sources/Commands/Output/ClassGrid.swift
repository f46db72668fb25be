import Flashing
import Transport

/// The live picture of a class set: one line per board and a header, as a value. It is fed the
/// events and results the `Flasher` already reports (and the class estimate, and who each board
/// is) and gives the lines to draw at a width (`ClassGrid+Lines.swift`); it decides nothing,
/// writes nothing and reads no clock. `GridOutput` draws it on a terminal.
struct ClassGrid: Equatable {
    /// The path a board is on, in the user's words.
    enum Path: String, Equatable {
        case partial
        case mcumgr = "McuMgr"
        case nordic = "Nordic DFU"
        /// A full update whose protocol is not known yet.
        case full
        case upToDate = "up to date"
    }

    /// How a board's flash ended.
    enum Outcome: Equatable {
        case verified
        /// Written, not read back: why.
        case unverified(String)
        case failed(String)
    }

    /// One board's line.
    struct Board: Equatable {
        /// The name it is flashed under (`sim-3`, or the name or address given).
        var key: String
        var name: String?
        var address: String?
        var path: Path?
        /// The phase under way; nil while the board waits for its turn.
        var phase: FlowPhase?
        var done = 0
        var total = 0
        var unit = ProgressUnit.bytes
        /// The rate on its link and the phase's time left at it, as the event carried it.
        var rate: ProgressRate?
        /// The time of its last event.
        var seen: Duration = .zero
        /// When it should run its new program, from the class's start (the class estimate).
        var expectedFinish: Duration?
        var outcome: Outcome?
        /// The flash's own time, once it ended.
        var seconds: Double?
        var retries = 0

        init(key: String) { self.key = key }

        var waiting: Bool { phase == nil && outcome == nil }
    }

    private(set) var boards: [Board]
    /// The latest time any event carried: the class's clock.
    private(set) var now: Duration = .zero
    /// The full path the estimate expects every board to take, when it expects one for all.
    private var expectedFull: Path?

    init(boards: [String]) { self.boards = boards.map(Board.init(key:)) }

    /// A grid of these boards, at this time.
    init(boards: [Board], now: Duration) {
        self.boards = boards
        self.now = now
    }

    private mutating func update(_ key: String, _ change: (inout Board) -> Void) {
        if let i = boards.firstIndex(where: { $0.key == key }) {
            change(&boards[i])
        } else {
            var board = Board(key: key)
            change(&board)
            boards.append(board)
        }
    }

    /// The class estimate: when each board should be done, and the full path expected, if one.
    mutating func apply(_ preview: ClassPreview) {
        for (i, finish) in preview.boardFinishes.enumerated() where i < boards.count {
            boards[i].expectedFinish = .milliseconds(Int64((finish * 1000).rounded()))
        }
        if preview.paths.count == 1 {
            expectedFull =
                preview.path == EstimatedPath.mcumgr.rawValue
                ? .mcumgr : preview.path == EstimatedPath.nordicDFU.rawValue ? .nordic : nil
        }
    }

    /// Who the boards are: their advertised names and addresses.
    mutating func apply(_ identities: [String: BoardIdentity]) {
        for (key, id) in identities {
            update(key) { b in
                b.name = id.name ?? b.name
                b.address = id.address ?? b.address
            }
        }
    }

    mutating func apply(_ e: FlashEvent) {
        now = max(now, e.elapsed)
        let expectedFull = self.expectedFull
        update(e.board) { b in
            b.seen = e.elapsed
            switch e.report {
            case .phase(let phase):
                b.phase = phase
                b.done = 0
                b.total = 0
                b.rate = nil
                // The phases say the path: partial flashing writes in its own phase; only a full
                // update uploads, and only McuMgr tests and confirms an image (McuMgrUpgrade).
                switch phase {
                case .partial: b.path = .partial
                case .upload: if b.path == nil || b.path == .partial { b.path = expectedFull ?? .full }
                case .test, .confirm: b.path = .mcumgr
                default: break
                }
            case let .progress(done, total, unit):
                b.done = done
                b.total = total
                b.unit = unit
                b.rate = e.rate
            case .retry: b.retries += 1
            case let .flow(r): if r.kind == .retry { b.retries += 1 }
            case .note, .trace, .decision, .checkpoint: break
            }
        }
    }

    mutating func apply(_ r: FlashResult) {
        update(r.board) { b in
            switch r.path {
            case .partial?: b.path = .partial
            case .upToDate?: b.path = .upToDate
            case .full?: b.path = r.fullPath == .mcumgr ? .mcumgr : r.fullPath == .nordic ? .nordic : .full
            case nil: break
            }
            b.seconds = r.seconds
            b.retries = max(b.retries, r.retries)
            if let error = r.error {
                b.outcome = .failed(error)
            } else if r.verification == .unverified {
                b.outcome = .unverified(r.verificationNote ?? "the board was not read back")
            } else {
                b.outcome = .verified
            }
        }
    }

    /// Boards done (written), failed, under way and waiting.
    var counts: (done: Int, failed: Int, flashing: Int, waiting: Int) {
        var c = (done: 0, failed: 0, flashing: 0, waiting: 0)
        for b in boards {
            switch b.outcome {
            case .failed?: c.failed += 1
            case .verified?, .unverified?: c.done += 1
            // A session reports `done` once, when it succeeded; its result may come later.
            case nil:
                if b.phase == .done {
                    c.done += 1
                } else if b.waiting {
                    c.waiting += 1
                } else {
                    c.flashing += 1
                }
            }
        }
        return c
    }

    /// A board's time left: the later of its estimated finish and its phase's time left at the
    /// rate on its link; nil when it has ended, or nothing says.
    func remaining(_ b: Board) -> Duration? {
        guard b.outcome == nil, b.phase != .done else { return nil }
        let planned = b.expectedFinish.map { $0 - now }.flatMap { $0 > .zero ? $0 : nil }
        let live = b.rate.map(\.remaining)
        switch (planned, live) {
        case let (p?, l?): return max(p, l)
        case let (p?, nil): return p
        case let (nil, l?): return l
        case (nil, nil): return nil
        }
    }

    /// The class's time left: its slowest unfinished board's.
    var classRemaining: Duration? { boards.compactMap(remaining).max() }
}
