import FirmwareImage
import LinkModel
import Transport

/// One GATT service of a simulated board.
///
/// The simulation calls a service when a client write reaches one of its characteristics
/// and when device work it scheduled is done. The service changes the device state and
/// asks for notifications, further work and reboots through `ServiceEffects`. Everything is
/// synchronous and on virtual time: "work that takes 85 ms" is `effects.schedule(after:)`.
public protocol SimulatedService: Sendable {
    /// The service UUID.
    var uuid: BLEUUID { get }
    /// The characteristics clients may write and subscribe to.
    var characteristics: Set<GATTCharacteristic> { get }
    /// A client write arrived (the BLE handler context on a real board).
    mutating func didWrite(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        device: inout DeviceState, effects: inout ServiceEffects)
    /// Work scheduled with `effects.schedule(after:tag:)` is done.
    mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects)
    /// The board booted: RAM state starts afresh.
    mutating func didBoot(device: DeviceState)
    /// The link to the central dropped (notifications are off again). Default: nothing.
    mutating func didDisconnect()
    /// The bootloader's work at a reset, before the board boots (an MCUboot swap). Default: none.
    mutating func runBootloader(device: inout DeviceState)
    /// How long `runBootloader` would take if the board reset now. Default: zero.
    func bootloaderTime(device: DeviceState, timing: DeviceTiming) -> Duration
    /// Whether the board offers this service now. Default: while the application runs,
    /// not while a Nordic bootloader ("DfuTarg") does.
    func isOffered(device: DeviceState) -> Bool
    /// Whether the board offers `characteristic` of this service now. Default: the
    /// service's characteristics while it is offered.
    func offers(_ characteristic: GATTCharacteristic, device: DeviceState) -> Bool
    /// Until when the board's radio misses connection events that fall at `t` because the
    /// service's flash work holds the chip (a page erase under the SoftDevice); nil: it takes
    /// part. Default: nil.
    func radioSilent(at t: VirtualInstant) -> VirtualInstant?
}

extension SimulatedService {
    public mutating func didDisconnect() {}
    public mutating func runBootloader(device: inout DeviceState) {}
    public func bootloaderTime(device: DeviceState, timing: DeviceTiming) -> Duration { .zero }
    public func radioSilent(at t: VirtualInstant) -> VirtualInstant? { nil }
    public func isOffered(device: DeviceState) -> Bool { !device.nordic.bootloaderActive }
    public func offers(_ characteristic: GATTCharacteristic, device: DeviceState) -> Bool {
        isOffered(device: device) && characteristics.contains(characteristic)
    }
}

/// A notification a service asks to send.
public struct ServiceNotification: Sendable, Equatable {
    public var characteristic: GATTCharacteristic
    public var bytes: [UInt8]
}

/// What a service call asks the board and the link to do, and what it may consult.
public struct ServiceEffects: Sendable {
    /// The virtual time of the call.
    public let now: VirtualInstant
    /// The board's work durations.
    public let timing: DeviceTiming
    public private(set) var notifications: [ServiceNotification] = []
    public private(set) var work: [(delay: Duration, tag: Int)] = []
    public private(set) var rebootRequested = false
    /// The board ends the link without resetting (and the central sees it drop).
    public private(set) var disconnectRequested = false
    public private(set) var notes: [String] = []
    var rng: SplitMix64
    let slowEraseProbability: Double
    let slowEraseFactor: Int
    public private(set) var slowErases = 0
    let flashOperationErrorProbability: Double
    public private(set) var flashOperationErrors = 0
    /// The run's index of the next flash operation, and the indices that fail.
    var flashOperationIndex = 0
    var failingFlashOperations: Set<Int> = []
    /// Whether the link the write came on is bonded (encrypted with a key the board keeps).
    /// The simulated link does not model bonds and counts as bonded; a host that knows (the
    /// fake BlueZ) says so per write.
    public internal(set) var linkBonded = true

    init(
        now: VirtualInstant, timing: DeviceTiming, rng: SplitMix64, slowErase: Double, slowEraseFactor: Int,
        flashOperationError: Double = 0
    ) {
        self.now = now
        self.timing = timing
        self.rng = rng
        self.slowEraseProbability = slowErase
        self.slowEraseFactor = slowEraseFactor
        self.flashOperationErrorProbability = flashOperationError
    }

    /// Sends a notification (dropped by the link unless the client subscribed).
    public mutating func notify(_ characteristic: GATTCharacteristic, _ bytes: [UInt8]) {
        notifications.append(ServiceNotification(characteristic: characteristic, bytes: bytes))
    }

    /// Calls `workDone(tag:)` after `delay` of device time.
    public mutating func schedule(after delay: Duration, tag: Int) { work.append((delay, tag)) }

    /// Resets the board once this call returns: the link drops, the board boots after its reboot time.
    public mutating func requestReboot() { rebootRequested = true }

    /// Ends the link once this call returns, without a reset (the board disconnects the central).
    public mutating func requestDisconnect() { disconnectRequested = true }

    /// Replaces each notification from index `start` on by what `change` makes of it (hostile boards).
    mutating func rewriteNotifications(from start: Int, _ change: (ServiceNotification) -> [ServiceNotification]) {
        guard start < notifications.count else { return }
        notifications = Array(notifications[..<start]) + notifications[start...].flatMap(change)
    }

    /// A line for the trace.
    public mutating func note(_ text: String) { notes.append(text) }

    /// Whether the flash operation starting now never completes (`FaultPlan.flashOperationError`).
    public mutating func flashOperationFails() -> Bool {
        let index = flashOperationIndex
        flashOperationIndex += 1
        guard failingFlashOperations.contains(index) || rng.chance(flashOperationErrorProbability) else {
            return false
        }
        flashOperationErrors += 1
        return true
    }

    /// How long this page erase takes, with the slow-erase fault applied.
    public mutating func pageEraseDuration() -> Duration {
        if rng.chance(slowEraseProbability) {
            slowErases += 1
            return timing.pageErase * max(slowEraseFactor, 1)
        }
        return timing.pageErase
    }
}
