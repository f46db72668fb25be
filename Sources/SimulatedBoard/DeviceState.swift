import FirmwareImage
import PartialFlashingFrames

/// Everything a simulated board remembers: flash (which holds the runtime's key-value store,
/// see `KeyValueStore`), and the mode it booted into. Services read and change it through
/// `SimulatedService`.
public struct DeviceState: Sendable, Equatable {
    public var flash: FlashMemory
    /// Where and how the runtime keeps its persistent keys (CODAL `KeyValueStorage`, DAL `MicroBitStorage`).
    public let keyValueStore: KeyValueStore
    /// The mode chosen at the last boot (a RAM variable on the board).
    public var mode: BoardMode
    /// The REGION_INFO table as the runtime computes it now: CODAL and DAL build a
    /// `MicroBitMemoryMap` for each REGION_INFO request, whose constructor scans the flash
    /// (`findHashes`), so it always shows the flash as it is, not as it was at boot.
    public var memoryMap: [RegionInfo] {
        MemoryMapScan.regions(flash: flash, layout: layout, runtime: runtime, runtimeEnd: runtimeEnd)
    }
    /// The runtime's `FLASH_PROGRAM_END`.
    public internal(set) var runtimeEnd: UInt32
    /// The Nordic bootloader's settings page and GPREGRET (unused on MCUboot boards).
    public internal(set) var nordic = NordicBootloaderSettings()
    public let layout: MemoryLayout
    public let runtime: BoardRuntime
    /// Boots since the board was created (or loaded).
    public internal(set) var bootCount = 0
    /// True while a flash operation the runtime's fiber waits for never ends, so the fiber
    /// scheduler never runs another fiber (RAM state: a reset ends it). CODAL and DAL
    /// `MicroBitFlash::erase_page` and `flash_burn` retry a refused `sd_flash_*` call every 10 ms
    /// with `system_timer_wait_ms` (a busy wait) and then spin on `flash_op_complete`, which only
    /// `NRF_EVT_FLASH_OPERATION_SUCCESS` sets (codal-microbit-v2 `source/MicroBitFlash.cpp`,
    /// microbit-dal `source/drivers/MicroBitFlash.cpp`). The handler runs in a fiber
    /// (codal-core `MessageBus`), so nothing else in thread context runs: not the pairing-mode
    /// loop that resets after its timeout (`MicroBitBLEManager::pairingMode`), not the idle
    /// callback that continues a shutdown (`MicroBitBLEManager::idleCallback`). The SoftDevice's
    /// interrupt handlers still run: STATUS, REGION_INFO and `FF 01` are answered.
    public internal(set) var fiberStarved = false
    /// True once a shutdown for buttonless DFU stopped advertising and disconnected the central
    /// and waits for the idle callback to finish it (RAM state): the board cannot be reached.
    public internal(set) var shutdownWaiting = false

    init(flash: FlashMemory, mode: BoardMode, runtimeEnd: UInt32, layout: MemoryLayout, runtime: BoardRuntime) {
        self.flash = flash
        self.keyValueStore = KeyValueStore(runtime: runtime, layout: layout)
        self.mode = mode
        self.runtimeEnd = runtimeEnd
        self.layout = layout
        self.runtime = runtime
    }

    /// The keys the store holds now, with their 32-byte values (read from the flash page).
    public var storage: [String: [UInt8]] {
        Dictionary(keyValueStore.pairs(in: flash).map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// True while an interrupted partial flash forces pairing mode on every boot.
    public var flashIncomplete: Bool { storage[StorageKey.flashIncomplete] != nil }

    /// True when the next boot goes to pairing mode because of a key (`RebootMode` or
    /// `flashIncomplete`) rather than the user's gesture.
    public var bootsIntoPairingMode: Bool { flashIncomplete || storage[StorageKey.rebootMode] != nil }

    /// Stores a key as the runtime's `put` does; false when the store refuses it (full).
    @discardableResult
    mutating func putKey(_ key: String, _ value: [UInt8]) -> Bool { keyValueStore.put(key, value, flash: &flash) }

    /// Removes a key as the runtime's `remove` does.
    mutating func removeKey(_ key: String) { keyValueStore.remove(key, flash: &flash) }

    /// Boots, as CODAL's and DAL's `MicroBit::init` decide (codal-microbit-v2 `model/MicroBit.cpp` L233-281, microbit `source/MicroBit.cpp` L125-189):
    /// read `RebootMode` and `flashIncomplete` (an empty store is initialised on the way);
    /// `RebootMode` selects pairing mode and is removed; `flashIncomplete` selects pairing mode
    /// and is kept (so every boot goes there until an END_OF_TRANSMISSION completes); the user's
    /// gesture (A+B held, or a triple reset on CODAL) selects it too; otherwise application mode.
    /// Pairing mode ends only with a reset, which decides again (docs/protocols/partial-flashing.md §3.7).
    mutating func boot(userRequestsPairing: Bool) {
        fiberStarved = false
        shutdownWaiting = false
        if nordic.bootloaderActive {
            bootCount += 1
            return
        }
        let rebootMode = keyValueStore.get(StorageKey.rebootMode, flash: &flash) != nil
        let incomplete = keyValueStore.get(StorageKey.flashIncomplete, flash: &flash) != nil
        if rebootMode {
            removeKey(StorageKey.rebootMode)
            mode = .pairing
        } else if incomplete || userRequestsPairing {
            mode = .pairing
        } else {
            mode = .application
        }
        bootCount += 1
    }
}
