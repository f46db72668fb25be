import FirmwareImage
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
    static let none = Faults()
}

/// A minimal single-threaded driver: runs a flow against a `ModelBoard` in modelled time,
/// delivering queued events first and otherwise firing the earliest timer. Deterministic
/// for a given seed.
struct LoopbackDriver<Flow: FlowMachine> {
    var flow: Flow
    var board: ModelBoard
    var faults: Faults
    var rng: SeededRandom
    private(set) var now: Duration = .zero
    private(set) var written: [[UInt8]] = []
    private(set) var injected = 0
    private var pending: [FlowEvent] = []
    private var timers: [TimerID: Duration] = [:]
    private var connected = true
    private var held: [FlowEvent] = []
    private var holding = false

    init(flow: Flow, board: ModelBoard, faults: Faults = .none, seed: UInt64 = 0) {
        self.flow = flow
        self.board = board
        self.faults = faults
        self.rng = SeededRandom(seed: seed)
    }

    /// Runs until the flow finishes; false when it stalls (no event and no timer) or loops.
    mutating func run(maxSteps: Int = 100_000) -> Bool {
        pending = [.start(link)]
        var steps = 0
        while flow.outcome == nil, steps < maxSteps {
            steps += 1
            let event: FlowEvent
            if !pending.isEmpty {
                event = pending.removeFirst()
            } else if let next = timers.min(by: { $0.value < $1.value }) {
                timers[next.key] = nil
                now = max(now, next.value)
                perform(flow.handle(.timerFired(next.key), now: now))
                // The late answers arrive after the flow reacted to its timeout, still in order.
                pending.append(contentsOf: held)
                held = []
                holding = false
                continue
            } else {
                return false
            }
            perform(flow.handle(event, now: now))
        }
        return flow.outcome != nil
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
                    pending.append(.writeFailed(pf, .notConnected(operation: "write")))
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
                let (notifications, reboots) = board.receive(bytes)
                for n in notifications where !chance(faults.dropNotification) {
                    if !holding, chance(faults.delayNotification) { holding = true }
                    if holding { held.append(.notification(pf, n)) } else { pending.append(.notification(pf, n)) }
                }
                if reboots { drop(.remoteTerminated) }
            case let .startTimer(id, duration):
                timers[id] = now + duration
            case let .cancelTimer(id):
                timers[id] = nil
            case .disconnect:
                if connected { drop(.localTerminated) }
            case let .connect(after):
                now += after
                connected = true
                pending.append(.connected(link))
            case .subscribe, .report, .finish:
                break
            }
        }
    }

    private mutating func drop(_ reason: DisconnectReason) {
        // Notifications still queued on a dropped link are lost.
        held = []
        holding = false
        connected = false
        pending.append(.disconnected(reason))
    }
}

/// A board that runs an older build of the same program: same runtime, same start,
/// different bytes and hash, and longer, so stale bytes lie beyond the new program.
func boardWithOldProgram(family: ChipFamily, at start: UInt32, mode: BoardMode = .pairing,
                         seed: UInt64 = 99) -> ModelBoard {
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
