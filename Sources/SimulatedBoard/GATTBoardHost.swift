import FirmwareImage
import LinkModel
import NordicDFUFrames
import Transport
import PartialFlashingFrames
import SMP

/// Runs one simulated board outside a `Simulation`, in real time, for a host that speaks
/// GATT to real clients (the fake BlueZ service, the SMP-over-UDP server through
/// `DatagramBoardHost`): a write goes to the service that owns the characteristic, and the
/// board's notifications, scheduled device work and resets come back as a `Step`.
///
/// The host stays pure: it never sleeps. Device work comes back as `Step.work` with its
/// modelled delay; the caller performs it after that delay on whatever clock it runs
/// (`perform(_:)`). A reset comes back as `Step.downFor`: writes are dropped until the caller
/// calls `boot()` (MCUboot swaps the slots then).
///
/// ```swift
/// var host = GATTBoardHost(board: board)
/// let step = host.write(bytes, to: PartialFlashingGATT.characteristic, kind: .command)
/// // deliver step.notifications, schedule step.work, honour step.downFor
/// ```
public struct GATTBoardHost: Sendable {
    /// Device work to perform after `delay`.
    public struct Work: Sendable, Equatable {
        public var delay: Duration
        var service: Int
        var tag: Int
        var epoch: Int
    }

    /// What one call asks the caller to do.
    public struct Step: Sendable {
        /// Notifications the board sends, in order (the link drops those the client did not
        /// subscribe to).
        public var notifications: [ServiceNotification] = []
        /// Work to perform later.
        public var work: [Work] = []
        /// Set when the board resets: it is down for this long, then call `boot()`.
        public var downFor: Duration?
        /// Trace lines of the board.
        public var notes: [String] = []
        /// True when the board ends the link without a reset.
        public var disconnects = false
        /// False when the write was not delivered (the board was resetting, or no service owns
        /// the characteristic).
        public var delivered = true
    }

    public private(set) var board: SimulatedBoard
    public let timing: DeviceTiming
    /// The board's modelled time, which the caller advances before each call (a real-time
    /// host: the real time since it started, divided by its time scale). The board's timed
    /// behaviour reads it: how long a page erase keeps the Secure DFU flash queue busy, the
    /// bootloaders' 120 s inactivity reset.
    public var now: Duration = .zero
    /// True while the board resets (between a reset and `boot()`).
    public private(set) var isDown = false
    private var epoch = 0
    private var rng: SplitMix64

    /// A host for `board`; `timing` defaults to its chip family's figures.
    public init(board: SimulatedBoard, timing: DeviceTiming? = nil, seed: UInt64 = 1) {
        self.board = board
        self.timing = timing ?? DeviceTiming.of(board.profile.family)
        self.rng = SplitMix64(seed: seed)
    }

    /// A client wrote `bytes` to `characteristic`, on a link that is `bonded` or not.
    public mutating func write(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        bonded: Bool = true
    ) -> Step {
        guard !isDown else {
            return Step(notes: ["write of \(bytes.count) bytes dropped: the board is resetting"], delivered: false)
        }
        // During a page erase the board's radio misses its connection events, and the central's
        // link layer sends the packet again at the first event after it (the SoftDevice's flash
        // scheduling; docs/behaviours.md): a write that arrives meanwhile reaches the board when
        // the erase ends, never while its queue is still full.
        var deferred: [String] = []
        if let until = board.radioSilent(at: VirtualInstant.zero + now) {
            now = until - VirtualInstant.zero
            deferred = ["write received at the end of a page erase (the radio was silent)"]
        }
        var effects = makeEffects()
        effects.linkBonded = bonded
        guard let service = board.write(bytes, to: characteristic, kind: kind, effects: &effects) else {
            return Step(notes: ["write dropped: the board has no characteristic \(characteristic)"], delivered: false)
        }
        var step = apply(effects, service: service)
        step.notes = deferred + step.notes
        return step
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

    /// The user resets the board at once (no reboot time); `holdingButtons` is the gesture
    /// for pairing mode (A+B + reset, or triple reset). Work still pending is abandoned.
    public mutating func resetByUser(holdingButtons: Bool) {
        epoch += 1
        isDown = false
        board.reset(holdingButtons: holdingButtons)
    }

    /// The board resets itself (`microbit_reset()`, e.g. after a pairing): work still pending is
    /// abandoned; it is down for the returned time, then `boot()`.
    public mutating func resetsItself() -> Duration {
        epoch += 1
        isDown = true
        return timing.reboot + board.bootloaderTime(timing: timing)
    }

    /// The client's link dropped without a reset: the services forget their per-link state
    /// (work already scheduled still runs, as on a real board).
    public mutating func linkDropped() {
        board.linkDropped()
    }

    private func makeEffects() -> ServiceEffects {
        ServiceEffects(now: VirtualInstant.zero + now, timing: timing, rng: rng, slowErase: 0, slowEraseFactor: 1)
    }

    private mutating func apply(_ effects: ServiceEffects, service: Int) -> Step {
        rng = effects.rng
        var step = Step(notifications: effects.notifications, notes: effects.notes)
        step.work = effects.work.map { Work(delay: $0.delay, service: service, tag: $0.tag, epoch: epoch) }
        step.disconnects = effects.disconnectRequested
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
    /// The board's GATT table as a central discovers it now: each service it offers with the
    /// characteristics it offers, in the order the board registers them. It changes with the
    /// mode: a board in its Nordic bootloader offers only the bootloader's service
    /// (nordic-dfu.md §2.2, §3.2), and FE59 holds the buttonless characteristic in the
    /// application but the control point and packet in the bootloader.
    public var gattServices: [(service: BLEUUID, characteristics: [GATTCharacteristic])] {
        services.filter { $0.isOffered(device: device) }.map { service in
            (
                service.uuid,
                service.characteristics.filter { service.offers($0, device: device) }
                    .sorted { $0.characteristic < $1.characteristic }
            )
        }
    }
}

extension GATTCharacteristic {
    /// The characteristic properties the boards' firmware declares, in BlueZ's flag names:
    /// partial flashing takes write commands and requests, SMP write commands (Zephyr's
    /// `smp_bt`); both notify. Nordic DFU (nordic-dfu.md §2.1, §2.2, §3.1, §3.2): the buttonless
    /// characteristics write + indicate, the control points write + notify, the packets write
    /// without response, the legacy revision read, the micro:bit DFU control read + write.
    public var declaredFlags: [String] {
        switch self {
        case PartialFlashingGATT.characteristic: return ["write-without-response", "write", "notify"]
        case SMPGATT.characteristic: return ["write-without-response", "notify"]
        case NordicGATT.buttonlessBonded, NordicGATT.buttonlessUnbonded: return ["write", "indicate"]
        case NordicGATT.secureControlPoint, NordicGATT.legacyControlPoint: return ["write", "notify"]
        case NordicGATT.securePacket, NordicGATT.legacyPacket: return ["write-without-response"]
        case NordicGATT.legacyRevision: return ["read"]
        case NordicGATT.dfuControl: return ["read", "write"]
        default: return ["read", "write-without-response", "write", "notify"]
        }
    }
}
