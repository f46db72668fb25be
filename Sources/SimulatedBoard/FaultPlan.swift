import FirmwareImage
import LinkModel
/// The faults a simulated run injects, deterministic from `seed`.
///
/// Probabilities are drawn per opportunity (per write, per notification, per erase,
/// per connection attempt) from a `SplitMix64` seeded with `seed`. Schedules name
/// exact opportunities: a write index counts the writes of one flow that went on air
/// in this run, from 0 (CCCD writes are not counted); a connection attempt index counts `connect` actions of the
/// flow, from 0 (the run's initial connection is never refused). Times are measured
/// from the start of the run.
public struct FaultPlan: Sendable, Equatable, Codable {
    public var seed: UInt64
    /// A client write is lost before it reaches the board's GATT server (the board never sees it).
    public var dropWrite: Double = 0
    /// These writes are lost (indices as for `disconnectAtWrite`).
    public var dropWriteAt: Set<Int> = []
    /// A notification is lost: the board could not queue it (CODAL's
    /// `MicroBitBLEChar::notifyChrValue` returns false when `sd_ble_gatts_hvx` fails, and the
    /// partial-flashing service ignores that).
    public var dropNotification: Double = 0
    /// These notifications are lost: indices count the notifications of one flow that reached the
    /// central in this run, from 0 (those lost by `dropNotification` included).
    public var dropNotificationAt: Set<Int> = []
    /// A notification is late: the link layer does not get it through in this connection event
    /// (a corrupted packet is sent again in the next one), so it and everything queued behind it
    /// leave one event later, still in order.
    public var delayNotification: Double = 0
    /// **Hostile, impossible on a BLE link:** a notification arrives twice (the copy in the next
    /// connection event). The link layer delivers each data PDU once (its SN/NESN scheme drops a
    /// resent copy, Bluetooth Core Specification Vol 6 Part B §4.5.9) and BlueZ hands each ATT
    /// notification once to each subscribed D-Bus client (`src/shared/gatt-client.c`
    /// `notify_cb`). Only for `sim campaign --hostile duplicated-notifications` and tests of what a
    /// client can detect.
    public var duplicateNotification: Double = 0
    /// **Hostile, impossible on a BLE link:** a notification slips behind the next one (or into the
    /// next event when there is none). The link layer sends a connection's data PDUs in order and
    /// sends the next one only once the last was acknowledged (Vol 6 Part B §4.5.9). Only for
    /// `sim campaign --hostile reordered-notifications`.
    public var reorderNotification: Double = 0
    /// The link drops when the client's write with one of these indices goes on air.
    public var disconnectAtWrite: Set<Int> = []
    /// The link drops at these times since the start of the run.
    public var disconnectAt: [Duration] = []
    /// The link drops on any write with this probability.
    public var disconnectPerWrite: Double = 0
    /// A `connect` attempt fails (BlueZ `le-connection-abort-by-local` / `InProgress`).
    public var refuseConnection: Double = 0
    /// These `connect` attempts fail.
    public var refuseConnectionAttempts: Set<Int> = []
    /// Every board resets at these times since the start of the run (the pairing-mode
    /// timeouts of docs/protocols/partial-flashing.md §3.7: 15 s after a new bond, ~270 s in pairing mode).
    public var resetDeviceAt: [Duration] = []
    /// A board resets when it has been in pairing mode this long (~270 s on real boards),
    /// counted from the start of the run or from its boot into pairing mode, whichever is later.
    public var pairingModeTimeout: Duration? = nil
    /// A page erase takes `slowEraseFactor` times longer.
    public var slowErase: Double = 0
    public var slowEraseFactor: Int = 10
    /// A page erase or block burn of the partial-flashing work never completes: the SoftDevice
    /// ends it with `NRF_EVT_FLASH_OPERATION_ERROR` (it could not fit the operation between
    /// radio events: nRF5 SDK `s113/headers/nrf_soc.h`, `sd_flash_page_erase`, `sd_flash_write`),
    /// and the runtime waits for `NRF_EVT_FLASH_OPERATION_SUCCESS` for ever (codal-microbit-v2
    /// `source/MicroBitFlash.cpp` `nvmc_event_handler`). The board's fibers starve
    /// (`DeviceState.fiberStarved`) until a reset.
    public var flashOperationError: Double = 0
    /// These partial-flashing flash operations never complete (as `flashOperationError`):
    /// indices count the page erases and block burns of the partial-flashing work of all
    /// boards in this run, from 0.
    public var flashOperationErrorAt: Set<Int> = []

    public init(seed: UInt64 = 0) { self.seed = seed }

    /// No faults at all.
    public static let none = FaultPlan()

    /// Checks every probability is in 0…1.
    public func validated() throws -> FaultPlan {
        for (name, p) in [
            ("dropWrite", dropWrite), ("dropNotification", dropNotification),
            ("duplicateNotification", duplicateNotification), ("delayNotification", delayNotification),
            ("reorderNotification", reorderNotification),
            ("disconnectPerWrite", disconnectPerWrite), ("refuseConnection", refuseConnection),
            ("slowErase", slowErase), ("flashOperationError", flashOperationError)
        ] where !(0...1).contains(p) {
            throw LinkModelError.badProbability(name: name, value: p)
        }
        return self
    }
}

/// How often each fault fired in a run. Every fault of `FaultPlan` has a counter.
public struct FaultCounters: Sendable, Equatable, Codable, CustomStringConvertible {
    public var droppedWrites = 0
    public var droppedNotifications = 0
    public var duplicatedNotifications = 0
    public var delayedNotifications = 0
    public var reorderedNotifications = 0
    public var disconnects = 0
    public var refusedConnections = 0
    public var deviceResets = 0
    public var slowErases = 0
    public var flashOperationErrors = 0

    public init() {}

    /// The total number of faults injected.
    public var total: Int {
        droppedWrites + droppedNotifications + duplicatedNotifications + delayedNotifications + reorderedNotifications
            + disconnects + refusedConnections + deviceResets + slowErases + flashOperationErrors
    }

    public var description: String {
        "dropped writes \(droppedWrites), dropped notifications \(droppedNotifications), "
            + "duplicated \(duplicatedNotifications), delayed \(delayedNotifications), "
            + "reordered \(reorderedNotifications), disconnects \(disconnects), "
            + "refused connections \(refusedConnections), device resets \(deviceResets), slow erases \(slowErases), "
            + "flash operation errors \(flashOperationErrors)"
    }
}
