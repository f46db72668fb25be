import Diagnostics
import Foundation
import LinkModel
import Transport

/// One line of a simulation trace: what happened, where, at which virtual time.
public struct TraceEntry: Sendable, Equatable, Codable {
    /// Microseconds since the start of the run.
    public var t: Int64
    /// The board involved, or -1 for none.
    public var board: Int
    public var kind: TraceKind
    public var text: String
}

/// What a trace line is about.
public enum TraceKind: String, Sendable, Equatable, Codable {
    case write, subscribe, writeFailed = "write-failed", lost, received, notify, notification
    case event, device, timer, report, connect, disconnect, reboot, boot, fault, finish, error
    /// An event told to a flow, as `RecordedEvent` text: what `TraceReplay` tells it again.
    case input
}

/// Every write, notification, connection event, timer and decision of a run, in time order.
public struct Trace: Sendable, Equatable {
    public private(set) var entries: [TraceEntry] = []
    /// False: nothing is recorded (long campaigns that only need statistics).
    public var isRecording = true

    public init(isRecording: Bool = true) { self.isRecording = isRecording }

    mutating func record(_ t: Int64, board: Int, _ kind: TraceKind, _ text: @autoclosure () -> String) {
        guard isRecording else { return }
        entries.append(TraceEntry(t: t, board: board, kind: kind, text: text()))
    }

    /// The trace as JSON lines (one object per line, keys sorted).
    public func jsonLines() -> String {
        var out = ""
        for e in entries {
            if let data = try? JSONText.lineData(e) { out += String(decoding: data, as: UTF8.self) + "\n" }
        }
        return out
    }

    /// Writes `jsonLines()` to `url`.
    public func write(to url: URL) throws {
        try Data(jsonLines().utf8).write(to: url, options: .atomic)
    }
}

/// What a run cost on the modelled link.
public struct RunStatistics: Sendable, Equatable, Codable {
    /// Modelled time from the start of the run until the last flow finished (or the deadline).
    public var modelledMicroseconds: Int64 = 0
    /// Modelled time from the start of the run until the boards finished their own work
    /// after the flows ended (for partial flashing: the END_OF_TRANSMISSION burn and reboot).
    public var settledMicroseconds: Int64 = 0
    /// Link-layer data packets and their payload bytes, central to board.
    public var centralPackets = 0
    public var centralBytes = 0
    /// Link-layer data packets and their payload bytes, board to central.
    public var peripheralPackets = 0
    public var peripheralBytes = 0
    /// Connection events that took place (all connections).
    public var connectionEvents = 0
    /// ATT writes the flows handed to the link, and notifications the flows received.
    public var writes = 0
    public var notificationsReceived = 0
    /// Notifications a board issued while its stack's queue was full, lost without a word
    /// (`SimulatedBoard.notificationQueueSlots`): a behaviour of the boards, not a fault.
    public var notificationsLostQueueFull = 0
    /// Connections established (the first one included).
    public var connections = 0
    public var faults = FaultCounters()

    public init() {}

    public var modelledTime: Duration { .microseconds(modelledMicroseconds) }

    /// The later of the flows' end and the boards' settling: what a lower bound that
    /// includes the board's reboot is compared with.
    public var completionTime: Duration { .microseconds(max(modelledMicroseconds, settledMicroseconds)) }
}

/// The result of running one flow.
public struct SimulationRun<Output: Sendable>: Sendable {
    /// The flow's outcome, or a `SimulatedBoardError` (deadline, stall, no connection).
    public var outcome: Result<Output, any Error>
    /// Modelled time from the start of the run until this flow finished.
    public var modelledTime: Duration
    /// Statistics of the whole run.
    public var statistics: RunStatistics
    public var trace: Trace
    /// The index of the adapter (in `Simulation.adapters`) the flow ran on.
    public var adapter: Int = 0
    /// The flow as it ended, for what it counted on the way (nil for a single typed run).
    public var machine: (any FlowMachine)? = nil
}
