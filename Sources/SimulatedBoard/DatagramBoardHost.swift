import FirmwareImage
import SMP
import LinkModel
import Transport

/// Runs one simulated board's SMP service outside a `Simulation`, for a datagram transport
/// (SMP over UDP, Zephyr's port 1337): each datagram is one write to the SMP characteristic,
/// and the notifications of one service call leave together as one datagram (a whole
/// response frame, as Zephyr's UDP transport sends it).
///
/// The host stays pure: it never sleeps. Device work the service schedules comes back as
/// `Step.work` with its modelled delay; the caller performs it after that delay on whatever
/// clock it runs (`perform(_:)`). A reset comes back as `Step.downFor`: datagrams are dropped
/// until the caller calls `boot()` (MCUboot swaps the slots then).
///
/// ```swift
/// var host = DatagramBoardHost(board: board)
/// let step = host.received(datagram)   // send step.datagrams, schedule step.work
/// ```
public struct DatagramBoardHost: Sendable {
    /// Device work to perform after `delay`.
    public struct Work: Sendable, Equatable {
        public var delay: Duration
        var service: Int
        var tag: Int
        var epoch: Int
    }

    /// What one call asks the caller to do.
    public struct Step: Sendable {
        /// Datagrams to send back to the client, in order.
        public var datagrams: [[UInt8]] = []
        /// Work to perform later.
        public var work: [Work] = []
        /// Set when the board resets: it is down for this long, then call `boot()`.
        public var downFor: Duration?
        /// Trace lines of the board.
        public var notes: [String] = []
    }

    public private(set) var board: SimulatedBoard
    public let timing: DeviceTiming
    /// True while the board resets (between a reset and `boot()`).
    public private(set) var isDown = false
    /// Datagrams dropped because the board was resetting or had no SMP service.
    public private(set) var droppedDatagrams = 0
    private var epoch = 0
    private var rng: SplitMix64

    /// A host for `board`; `timing` defaults to its chip family's figures.
    public init(board: SimulatedBoard, timing: DeviceTiming? = nil, seed: UInt64 = 1) {
        self.board = board
        self.timing = timing ?? DeviceTiming.of(board.profile.family)
        self.rng = SplitMix64(seed: seed)
    }

    /// A datagram arrived from the client.
    public mutating func received(_ datagram: [UInt8]) -> Step {
        guard !isDown else {
            droppedDatagrams += 1
            return Step(notes: ["datagram of \(datagram.count) bytes dropped: the board is resetting"])
        }
        var effects = makeEffects()
        guard let service = board.write(datagram, to: KnownGATT.smp, kind: .command, effects: &effects) else {
            droppedDatagrams += 1
            return Step(notes: ["datagram dropped: the board has no SMP service"])
        }
        return apply(effects, service: service)
    }

    /// Performs work returned by an earlier step (ignored when the board reset meanwhile).
    public mutating func perform(_ work: Work) -> Step {
        guard work.epoch == epoch, !isDown else { return Step() }
        var effects = makeEffects()
        board.workDone(service: work.service, tag: work.tag, effects: &effects)
        return apply(effects, service: work.service)
    }

    /// The reset time is over: the bootloader runs (swap or revert) and the board boots.
    public mutating func boot() -> Step {
        guard isDown else { return Step() }
        isDown = false
        board.reset()
        return Step(notes: ["booted (boot \(board.device.bootCount))"])
    }

    private func makeEffects() -> ServiceEffects {
        ServiceEffects(now: VirtualInstant.zero, timing: timing, rng: rng, slowErase: 0, slowEraseFactor: 1)
    }

    private mutating func apply(_ effects: ServiceEffects, service: Int) -> Step {
        rng = effects.rng
        var step = Step(notes: effects.notes)
        let bytes = effects.notifications.filter { $0.characteristic == KnownGATT.smp }.flatMap(\.bytes)
        if !bytes.isEmpty { step.datagrams.append(bytes) }
        step.work = effects.work.map { Work(delay: $0.delay, service: service, tag: $0.tag, epoch: epoch) }
        if effects.rebootRequested {
            epoch += 1
            isDown = true
            step.work = []
            step.downFor = timing.reboot + board.bootloaderTime(timing: timing)
        }
        return step
    }
}

extension SimulatedBoard {
    /// The slot list the board's SMP server would answer an image state read with now
    /// (nil without an SMP service): what a client's view of the slots is checked against.
    public var smpSlotStates: [ImageSlotState]? {
        smpServer?.slotStates(device: device)
    }
}
