import FirmwareImage
import PartialFlashingFrames
import Transport
@testable import PartialFlashing

/// Faults the loopback driver injects, each with a probability per write.
struct Faults {
    var dropWrite = 0.0
    var dropNotification = 0.0
    var linkLoss = 0.0
    var boardReset = 0.0
    /// Holds a notification (and, to keep order, every later one) until the next timer has fired:
    /// an answer that arrives after the flow's timeout.
    var delayNotification = 0.0
    /// Delivers a notification twice in a row. Hostile: a BLE link never does this (it delivers
    /// each PDU once, `FaultPlan.duplicateNotification`).
    var duplicateNotification = 0.0
    static let none = Faults()
}

/// A minimal discrete-event driver: runs a flow against a `ModelBoard` in modelled time.
/// Every answer of the board reaches the flow `latency` after the write that caused it
/// (a duplicate at the same instant as its original), or, with `answerDelays`, after a delay
/// drawn from that range for each answer, never before an earlier answer (a link keeps order);
/// timers fire in time order when no earlier event is due. Deterministic for a given seed.
struct LoopbackDriver<Flow: FlowMachine> {
    var flow: Flow
    var board: ModelBoard
    var faults: Faults
    var rng: SeededRandom
    let latency: Duration
    /// When set, each answer's delay is drawn from this range instead of `latency`.
    var answerDelays: ClosedRange<Duration>?
    /// When the last answer is due: a later answer never comes before it.
    private var lastDelivery: Duration = .zero
    private(set) var now: Duration = .zero
    private(set) var written: [[UInt8]] = []
    private(set) var injected = 0
    /// When true, `log` records every event and write in short form (for debugging a seed).
    var recordLog = false
    private(set) var log: [String] = []
    private var pending: [(at: Duration, event: FlowEvent)] = []
    private var timers: [TimerID: Duration] = [:]
    private var connected = true
    private var held: [FlowEvent] = []
    private var holding = false

    init(
        flow: Flow, board: ModelBoard, faults: Faults = .none, seed: UInt64 = 0,
        latency: Duration = .milliseconds(15)
    ) {
        self.flow = flow
        self.board = board
        self.faults = faults
        self.rng = SeededRandom(seed: seed)
        self.latency = latency
    }

    /// Runs until the flow finishes; false when it stalls (no event and no timer) or loops.
    mutating func run(maxSteps: Int = 100_000) -> Bool {
        pending = [(.zero, .start(link))]
        var steps = 0
        while flow.outcome == nil, steps < maxSteps {
            steps += 1
            let timer = timers.min { $0.value < $1.value }
            if let first = pending.first, timer.map({ first.at <= $0.value }) ?? true {
                pending.removeFirst()
                now = max(now, first.at)
                if recordLog { log.append("\(now) event \(first.event)") }
                perform(flow.handle(first.event, now: now))
            } else if let timer {
                timers[timer.key] = nil
                now = max(now, timer.value)
                if recordLog { log.append("\(now) timer \(timer.key)") }
                perform(flow.handle(.timerFired(timer.key), now: now))
                // The late answers arrive after the flow reacted to its timeout, still in order.
                for event in held { enqueue(event, at: now) }
                held = []
                holding = false
            } else {
                return false
            }
        }
        return flow.outcome != nil
    }

    /// Queues `event` after every event due at or before `at`.
    private mutating func enqueue(_ event: FlowEvent, at: Duration) {
        let i = pending.firstIndex { $0.at > at } ?? pending.endIndex
        pending.insert((at, event), at: i)
    }

    private mutating func chance(_ p: Double) -> Bool {
        guard p > 0 else { return false }
        let hit = Double.random(in: 0..<1, using: &rng) < p
        if hit { injected += 1 }
        return hit
    }

    private mutating func perform(_ actions: [FlowAction]) {
        for action in actions {
            switch action {
            case let .write(_, bytes, _):
                guard connected else {
                    enqueue(.writeFailed(pf, .notConnected(operation: "write")), at: now)
                    continue
                }
                if chance(faults.linkLoss) {
                    drop(.supervisionTimeout)
                    continue
                }
                if chance(faults.boardReset) {
                    board.reboot()
                    drop(.remoteTerminated)
                    continue
                }
                if chance(faults.dropWrite) { continue }
                written.append(bytes)
                if recordLog { log.append("  write \(bytes.prefix(4).map { String($0, radix: 16) })") }
                let (notifications, reboots) = board.receive(bytes)
                for n in notifications where !chance(faults.dropNotification) {
                    if !holding, chance(faults.delayNotification) { holding = true }
                    let copies = chance(faults.duplicateNotification) ? 2 : 1
                    let at = max(now + answerDelay(), lastDelivery)
                    for _ in 0..<copies {
                        if holding { held.append(.notification(pf, n)) } else { enqueue(.notification(pf, n), at: at) }
                    }
                    if !holding { lastDelivery = at }
                }
                if reboots { drop(.remoteTerminated) }
            case let .startTimer(id, duration):
                timers[id] = now + duration
            case let .cancelTimer(id):
                timers[id] = nil
            case .disconnect:
                if connected { drop(.localTerminated) }
            case let .connect(after, _):
                connected = true
                enqueue(.connected(link), at: now + after)
            case .subscribe, .report, .finish:
                break
            }
        }
    }

    /// The delay of the next answer: `latency`, or a draw from `answerDelays` (microsecond steps).
    private mutating func answerDelay() -> Duration {
        guard let range = answerDelays else { return latency }
        func micros(_ d: Duration) -> Int64 {
            d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
        }
        return .microseconds(Int64.random(in: micros(range.lowerBound)...micros(range.upperBound), using: &rng))
    }

    private mutating func drop(_ reason: DisconnectReason) {
        // Notifications still queued on a dropped link are lost.
        held = []
        holding = false
        connected = false
        enqueue(.disconnected(reason), at: now + latency)
    }
}

/// A board that runs an older build of the same program: same runtime, same start,
/// different bytes and hash, and longer, so stale bytes lie beyond the new program.
func boardWithOldProgram(
    family: ChipFamily, at start: UInt32, mode: BoardMode = .pairing,
    seed: UInt64 = 99
) -> ModelBoard {
    var board = ModelBoard(family: family, mode: mode)
    var rng = SeededRandom(seed: seed)
    let body = (0..<(Int(family.pageSize) * 3)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    board.load(MakeCodeProgram.magic + runtimeHash + oldProgramHash + body, at: start)
    return board
}

/// True when every page the program touches holds exactly the program, 0xFF elsewhere.
func boardHolds(_ board: ModelBoard, image: MemoryImage, program: MakeCodeProgram, pageSize: UInt32) -> Bool {
    let end = (program.region.upperBound + pageSize - 1) & ~(pageSize - 1)
    let expected = image.read(program.region.lowerBound..<end, fill: 0xFF)
    return board.flash[Int(program.region.lowerBound)..<Int(end)].elementsEqual(expected)
}
