/// The vocabulary shared by every flashing flow and every driver.
///
/// A flow (reading the memory map, partial flashing, an McuMgr upgrade, a whole
/// session with fallback) is a value-type state machine: it takes `FlowEvent`s
/// and returns `FlowAction`s. It never sleeps, never touches a clock and never
/// performs I/O. A driver performs the actions and feeds back the events:
/// the simulator on virtual time, or the async driver on a real transport.
///
/// What a flow tells the user is a value where the flow has moved to typed reports
/// (`FlowMachine.Report`, `FlowReportValue`): the flow emits `Self.report(value)`, which travels
/// as `.report(.flow(AnyFlowReport))` through `ChildFlow` (unchanged: a parent passes its
/// children's reports on) and the drivers (unchanged: they hand every `FlowReport` to their
/// observer), and one presenter (`FlowWords`, Flashing) makes the words. The full updates
/// (Nordic DFU, McuMgr), the partial flash's reads, decision and checks, and the session report
/// values; the partial-flashing writer still reports words (`retry`, `trace`, `note` with a
/// string) and moves next. See `TypedReport.swift`.

/// A named timer of a flow. Starting a timer with a running id restarts it.
public struct TimerID: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }
}

/// What a driver needs to know about a live connection.
public struct ConnectionInfo: Sendable, Equatable {
    /// The services the board offers on this connection.
    public var services: Set<BLEUUID>
    /// The negotiated ATT MTU (payload of one write = mtu - 3).
    public var mtu: Int
    /// The advertised name, when known.
    public var name: String?
    /// The connection interval, when the transport knows it (the link model does).
    public var connectionInterval: Duration?
    public init(services: Set<BLEUUID>, mtu: Int, name: String? = nil, connectionInterval: Duration? = nil) {
        self.services = services
        self.mtu = mtu
        self.name = name
        self.connectionInterval = connectionInterval
    }
}

public enum WriteKind: String, Sendable, Equatable, Codable {
    /// ATT Write Command: no response (BlueZ `type=command`).
    case command
    /// ATT Write Request: acknowledged (BlueZ `type=request`).
    case request
}

/// Something that happened on the link, fed to a flow.
public enum FlowEvent: Sendable, Equatable {
    /// The flow starts on a live connection.
    case start(ConnectionInfo)
    /// A notification arrived.
    case notification(GATTCharacteristic, [UInt8])
    /// A timer the flow started has fired.
    case timerFired(TimerID)
    /// The link dropped. Writes still queued were lost.
    case disconnected(DisconnectReason)
    /// A `connect` action succeeded (notifications are subscribed again by the flow).
    case connected(ConnectionInfo)
    /// A `connect` action failed.
    case connectFailed(TransportError)
    /// A write could not be handed to the link.
    case writeFailed(GATTCharacteristic, TransportError)
}

/// Something a flow asks its driver to do, in order.
public enum FlowAction: Sendable, Equatable {
    /// Send `bytes` to a characteristic.
    case write(GATTCharacteristic, [UInt8], WriteKind)
    /// Subscribe to a characteristic's notifications, then enable them.
    case subscribe(GATTCharacteristic)
    /// Start (or restart) a timer.
    case startTimer(TimerID, Duration)
    case cancelTimer(TimerID)
    /// Close the link. A `disconnected` event follows.
    case disconnect
    /// Wait `after`, then connect to the board again: to the same device, or to the board's
    /// Nordic bootloader or application after it reset into the other (`ConnectTarget`).
    /// `connected` or `connectFailed` follows.
    case connect(after: Duration, to: ConnectTarget = .sameDevice)
    /// Tell the user (progress bar, JSON events, `-v` traces).
    case report(FlowReport)
    /// The flow has ended; its `outcome` is set.
    case finish
}

/// What a `connect` action connects to. A board keeps one Bluetooth address in its
/// application, in pairing mode and in the micro:bit and Calliope bootloaders, but a Nordic
/// bootloader built without bonds advertises at the address + 1 (last octet, no carry;
/// nRF5 SDK `nrf_dfu_ble.c` `gap_address_change`), so the transport, which knows addresses,
/// resolves where "the bootloader" is; a simulated link has one board and ignores the target.
public enum ConnectTarget: String, Sendable, Equatable, Codable {
    /// The device of the last connection.
    case sameDevice
    /// The board's Nordic bootloader ("DfuTarg"), just entered from its application (or reset):
    /// at the application's address, else at the next one.
    case bootloader
    /// The board's application, started by its bootloader: at the application's address.
    case application
}

/// What a flow tells the user while it runs.
public enum FlowReport: Sendable, Equatable {
    case phase(FlowPhase)
    /// Work done so far in the current phase.
    case progress(done: Int, total: Int, unit: ProgressUnit)
    case retry(String)
    /// A protocol-level trace line, for `-v`.
    case trace(String)
    /// A plain note for the user, for example why a path was chosen.
    case note(String)
    /// The path was chosen: a stable code (`FlashReason.code`) and the reason in words.
    /// Reported before anything is written.
    case decision(code: String, message: String)
    /// An interrupted write could continue from here (nil: nothing to continue, forget any
    /// saved point). Drivers that can resume keep the latest one.
    /// The value is the flow's own `FlowCheckpoint` (the partial flash's `ResumePoint`).
    case checkpoint(AnyFlowCheckpoint?)
    /// A typed report (`FlowMachine.Report`): a retry, trace, note or decision as a value, its
    /// words made by `FlowWords`.
    case flow(AnyFlowReport)
}

public enum ProgressUnit: String, Sendable, Equatable, Codable { case bytes, blocks }

/// The phase a flow is in, by name: the words of the progress line, `-v` and the JSON `phase`
/// events. Open: the phases every flow family shares are here; each flow module adds its own
/// (`.partial`, `.readingMemoryMap` and `.switchingToPairingMode` in PartialFlashing, `.test` and
/// `.confirm` in McuMgr), so that the base layer names no flow's steps.
public struct FlowPhase: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The phase as the user sees it; stable, scripts read it from the JSON output.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Connecting to the board (or again, to its bootloader or application).
    public static let connecting = FlowPhase(rawValue: "connecting")
    /// Uploading a whole firmware image (a full update: McuMgr or Nordic DFU).
    public static let upload = FlowPhase(rawValue: "full upload")
    /// Resetting the board.
    public static let reset = FlowPhase(rawValue: "reset")
    /// Checking what the board runs after the write.
    public static let verify = FlowPhase(rawValue: "verify")
    /// The flow has finished.
    public static let done = FlowPhase(rawValue: "done")
}

/// A flashing flow as a pure state machine.
public protocol FlowMachine: Sendable {
    associatedtype Output: Sendable
    /// The flow's typed reports (one enum per flow family); `Never` for a flow that reports in
    /// words or only phases and progress.
    associatedtype Report: FlowReportValue = Never
    /// Feeds one event. `now` is the time since the driver started the flow
    /// (modelled time on the simulator, real time otherwise).
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction]
    /// Set once the flow has emitted `finish`.
    var outcome: Result<Output, any Error>? { get }
}
