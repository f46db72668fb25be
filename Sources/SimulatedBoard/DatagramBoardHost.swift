import FirmwareImage
import SMP
import LinkModel
import Transport

/// Runs one simulated board's SMP service outside a `Simulation`, for a datagram transport
/// (SMP over UDP, Zephyr's port 1337): each datagram is one write to the SMP characteristic,
/// and the notifications of one service call leave together as one datagram (a whole
/// response frame, as Zephyr's UDP transport sends it).
///
/// A thin layer over `GATTBoardHost`, which stays pure: device work comes back as
/// `Step.work` with its modelled delay, for the caller to `perform(_:)` after that delay; a
/// reset comes back as `Step.downFor`: datagrams are dropped until the caller calls `boot()`.
///
/// ```swift
/// var host = DatagramBoardHost(board: board)
/// let step = host.received(datagram)   // send step.datagrams, schedule step.work
/// ```
public struct DatagramBoardHost: Sendable {
    /// Device work to perform after `delay`.
    public typealias Work = GATTBoardHost.Work

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

    private var host: GATTBoardHost
    public var board: SimulatedBoard { host.board }
    public var timing: DeviceTiming { host.timing }
    /// True while the board resets (between a reset and `boot()`).
    public var isDown: Bool { host.isDown }
    /// Datagrams dropped because the board was resetting or had no SMP service.
    public private(set) var droppedDatagrams = 0

    /// A host for `board`; `timing` defaults to its chip family's figures.
    public init(board: SimulatedBoard, timing: DeviceTiming? = nil, seed: UInt64 = 1) {
        host = GATTBoardHost(board: board, timing: timing, seed: seed)
    }

    /// A datagram arrived from the client.
    public mutating func received(_ datagram: [UInt8]) -> Step {
        guard !host.isDown else {
            droppedDatagrams += 1
            return Step(notes: ["datagram of \(datagram.count) bytes dropped: the board is resetting"])
        }
        let step = host.write(datagram, to: SMPGATT.characteristic, kind: .command)
        guard step.delivered else {
            droppedDatagrams += 1
            return Step(notes: ["datagram dropped: the board has no SMP service"])
        }
        return converted(step)
    }

    /// Performs work returned by an earlier step (ignored when the board reset meanwhile).
    public mutating func perform(_ work: Work) -> Step {
        converted(host.perform(work))
    }

    /// The reset time is over: the bootloader runs (swap or revert) and the board boots.
    public mutating func boot() -> Step {
        converted(host.boot())
    }

    private func converted(_ step: GATTBoardHost.Step) -> Step {
        var result = Step(work: step.work, downFor: step.downFor, notes: step.notes)
        let bytes = step.notifications.filter { $0.characteristic == SMPGATT.characteristic }.flatMap(\.bytes)
        if !bytes.isEmpty { result.datagrams.append(bytes) }
        return result
    }
}

extension SimulatedBoard {
    /// The slot list the board's SMP server would answer an image state read with now
    /// (nil without an SMP service): what a client's view of the slots is checked against.
    public var smpSlotStates: [ImageSlotState]? {
        smpServer?.slotStates(device: device)
    }
}
