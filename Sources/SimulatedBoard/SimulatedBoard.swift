import FirmwareImage
import LinkModel
import NordicDFUFrames
import PartialFlashingFrames
import Transport

/// A simulated micro:bit or Calliope mini: flash, storage, mode and GATT services.
///
/// A board is a value. Put it into a `Simulation` to connect flows to it; read its flash
/// afterwards to verify a flash; save it to a file so it survives between runs.
public struct SimulatedBoard: Sendable {
    public let profile: BoardProfile
    public internal(set) var device: DeviceState
    var services: [any SimulatedService]

    /// A board whose flash holds `image` (0xFF elsewhere), booted normally: in application
    /// mode, or pairing mode when `mode` says so.
    /// The UICR words a hex may carry (bootloader address, NFC pins) are configuration
    /// registers, not flash: they are left out.
    /// - Throws: `SimulatedBoardError.imageOutsideFlash` when the image does not fit the chip.
    public init(profile: BoardProfile, image: MemoryImage = MemoryImage(), mode: BoardMode = .application) throws {
        let layout = profile.layout
        let uicr: Range<UInt32> = 0x1000_1000..<0x1000_2000
        var flashImage = image
        if image.hasData(in: uicr) {
            flashImage = MemoryImage(segments: image.segments.filter { !uicr.overlaps($0.range) })
        }
        let flash = try FlashMemory(layout: layout, image: flashImage)
        let end = profile.runtimeEnd ?? MemoryMapScan.deriveRuntimeEnd(image: image, layout: layout)
        self.init(
            profile: profile,
            device: DeviceState(flash: flash, mode: mode, runtimeEnd: end, layout: layout, runtime: profile.runtime))
    }

    /// A board with the standard profile of `board`.
    public init(
        _ board: Board, image: MemoryImage = MemoryImage(), mode: BoardMode = .application,
        bluetoothInApplicationMode: Bool = false
    ) throws {
        try self.init(
            profile: BoardProfile(board: board, bluetoothInApplicationMode: bluetoothInApplicationMode),
            image: image, mode: mode)
    }

    init(profile: BoardProfile, device: DeviceState) {
        self.profile = profile
        self.device = device
        services = profile.services.flatMap { kind -> [any SimulatedService] in
            switch kind {
            case .partialFlashing: return [PartialFlashingService(runtime: profile.runtime)]
            case .smp: return [SMPServer(configuration: .standard(for: profile.layout, attMTU: profile.attMTU))]
            case .secureDFU: return [SecureDFUBootloader(family: profile.family)]
            case .legacyDFU: return [DFUControlService(), LegacyDFUBootloader(family: profile.family)]
            }
        }
    }

    /// Adds a service beyond those of the profile (for services under development and tests).
    /// It is not saved with the board: add it again after `load`.
    public mutating func addService(_ service: any SimulatedService) {
        services.append(service)
    }

    /// The board's flash.
    public var flash: FlashMemory { device.flash }
    /// The mode the board is in.
    public var mode: BoardMode { device.mode }
    /// True while an interrupted partial flash forces pairing mode on every boot.
    public var flashIncomplete: Bool { device.flashIncomplete }
    /// True while the partial-flashing work hangs on a flash operation that never ends and
    /// starves the runtime's fibers (`DeviceState.fiberStarved`): only a reset ends it.
    public var flashWorkHangs: Bool { device.fiberStarved }
    /// The pages the runtime writes for itself: its key-value page and, on DAL, the flash scratch
    /// page its store copies through (`KeyValueStore`). No firmware file puts anything there.
    public var runtimeStoragePages: [UInt32] {
        let store = device.keyValueStore
        return [store.page] + (store.scratchPage.map { [$0] } ?? [])
    }

    /// The REGION_INFO table the board answers with.
    public var memoryMap: [RegionInfo] { device.memoryMap }

    /// Leaves the board as a partial flash that was not finished leaves it, by whichever client:
    /// `flashIncomplete` in its key-value page, so it starts in pairing mode at every boot
    /// until an END_OF_TRANSMISSION completes. It takes effect at the next boot (`reset`).
    public mutating func markFlashIncomplete() {
        device.putKey(StorageKey.flashIncomplete, [0x01])
    }

    /// Forgets the flash's erase/write counters and logs (before a run whose writes are checked).
    public mutating func resetFlashCounters() { device.flash.resetCounters() }

    /// The bytes of `range` of flash (for verification).
    public func readFlash(_ range: Range<UInt32>) throws -> [UInt8] { try device.flash.read(range) }

    /// Whether a central can connect now: always in pairing mode; in application mode only
    /// when the program keeps Bluetooth on.
    /// A Nordic bootloader ("DfuTarg") advertises all the time.
    /// A board whose buttonless-DFU shutdown waits for a starved fiber has stopped advertising.
    public var isConnectable: Bool {
        if device.nordic.bootloaderActive { return true }
        guard !device.shutdownWaiting else { return false }
        return device.mode == .pairing || profile.bluetoothInApplicationMode
    }

    /// The services the board offers now (in "DfuTarg": only the bootloader's).
    public var offeredServices: Set<BLEUUID> { Set(services.filter { $0.isOffered(device: device) }.map(\.uuid)) }

    /// What a central learns when it connects.
    public func connectionInfo(centralMTU: Int) -> ConnectionInfo {
        ConnectionInfo(services: offeredServices, mtu: min(centralMTU, attMTU), name: advertisedName)
    }

    /// How many notifications the board's stack holds until they have left, or nil where no
    /// bound is modelled. The nRF52833 boards run S113, whose `hvn_tx_queue_size` defaults to 1
    /// (nRF5 SDK `s113/headers/ble_gatts.h`, `BLE_GATTS_HVN_TX_QUEUE_SIZE_DEFAULT`); neither CODAL
    /// nor the V2 bootloader changes it (`nrf_sdh_ble.c` `nrf_sdh_ble_default_cfg_set` sets no
    /// queue size), and both send with one `sd_ble_gatts_hvx` call whose failure they ignore
    /// (CODAL `source/bluetooth/MicroBitBLEChar.cpp` `notifyChrValue`; V2 bootloader
    /// `nrf_dfu_ble.c` `ble_dfu_req_handler_callback`, `(void) response_send`). S110 on the nRF51
    /// sizes its pool at run time (`sd_ble_tx_buffer_count_get`) and the MCUboot profile is
    /// Zephyr's stack: no bound there. The header calls the default the *minimum guaranteed*
    /// queue size, so one slot is the worst case a board may show, not a measured figure.
    public var notificationQueueSlots: Int? {
        guard profile.family == .nrf52833 else { return nil }
        return device.nordic.bootloaderActive || !profile.services.contains(.smp) ? 1 : nil
    }

    /// The advertised name: the profile's, or "DfuTarg" while a Nordic bootloader runs.
    public var advertisedName: String { device.nordic.bootloaderActive ? NordicGATT.bootloaderName : profile.name }

    /// The ATT MTU the running firmware supports: the secure bootloader's 247, the legacy
    /// bootloader's 23, otherwise the profile's.
    public var attMTU: Int {
        guard device.nordic.bootloaderActive else { return profile.attMTU }
        return profile.services.contains(.secureDFU) ? 247 : 23
    }

    /// The LL data length the running firmware supports (the secure bootloader answers "auto": 251).
    public var dataLength: Int {
        guard device.nordic.bootloaderActive else { return profile.dataLength }
        return profile.services.contains(.secureDFU) ? 251 : 27
    }

    /// The index of the service that owns `characteristic`, if the board offers it now.
    func serviceIndex(of characteristic: GATTCharacteristic) -> Int? {
        services.firstIndex { $0.offers(characteristic, device: device) }
    }

    /// Resets and boots the board at once (no reboot time: for use outside a simulation).
    /// `holdingButtons` is the user's gesture for pairing mode (A+B + reset, or triple reset).
    public mutating func reset(holdingButtons: Bool = false) {
        if hasNordicBootloader { device.nordic.reset() }
        for i in services.indices { services[i].runBootloader(device: &device) }
        device.boot(userRequestsPairing: holdingButtons)
        for i in services.indices { services[i].didBoot(device: device) }
    }

    /// Tells the services that the central's link dropped.
    mutating func linkDropped() {
        for i in services.indices { services[i].didDisconnect() }
    }

    /// How long the runtime's boot decision would take beyond `DeviceTiming.reboot`, if the board
    /// reset now: a key makes it light the LED matrix step by step before pairing mode starts,
    /// one step for `RebootMode`, 25 for `flashIncomplete` alone; a step is 20 ms (CODAL, and DAL
    /// on micro:bit V1) or 50 ms (DAL on Calliope mini 1/2) (codal-microbit-v2 `model/MicroBit.cpp`
    /// L248-258; microbit `source/MicroBit.cpp` L139, calliope-mini/microbit L156). The user's
    /// gesture is not simulated in time.
    public var bootDecisionTime: Duration {
        guard !device.nordic.enterOnReset, device.nordic.applicationValid else { return .zero }
        let step: Duration =
            profile.board == .calliopeMini1 || profile.board == .calliopeMini2 ? .milliseconds(50) : .milliseconds(20)
        let store = device.storage
        if store[StorageKey.rebootMode] != nil { return step }
        if store[StorageKey.flashIncomplete] != nil { return step * 25 }
        return .zero
    }

    /// How long the bootloader would work before the board boots, if it reset now (an MCUboot swap).
    public func bootloaderTime(timing: DeviceTiming) -> Duration {
        services.reduce(.zero) { $0 + $1.bootloaderTime(device: device, timing: timing) }
    }

    /// Until when the board misses connection events falling at `t` (a page erase holds the chip); nil: it listens.
    public func radioSilent(at t: VirtualInstant) -> VirtualInstant? {
        services.lazy.compactMap { $0.radioSilent(at: t) }.max()
    }

    /// Delivers a write to the service that owns `characteristic`.
    mutating func write(
        _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
        effects: inout ServiceEffects
    ) -> Int? {
        guard let i = serviceIndex(of: characteristic) else { return nil }
        services[i].didWrite(bytes, to: characteristic, kind: kind, device: &device, effects: &effects)
        return i
    }

    /// Tells service `index` that its work `tag` is done.
    mutating func workDone(service index: Int, tag: Int, effects: inout ServiceEffects) {
        guard services.indices.contains(index) else { return }
        services[index].workDone(tag: tag, device: &device, effects: &effects)
    }
}
