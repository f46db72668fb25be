import FirmwareImage
import PartialFlashingFrames

/// Everything a simulated board remembers: flash, persistent key-value storage, and the
/// mode it booted into. Services read and change it through `SimulatedService`.
public struct DeviceState: Sendable, Equatable {
    public var flash: FlashMemory
    /// The runtime's persistent key-value store (CODAL `KeyValueStorage`, DAL `MicroBitStorage`).
    public var storage: [String: [UInt8]]
    /// The mode chosen at the last boot (a RAM variable on the board).
    public var mode: BoardMode
    /// The REGION_INFO table computed at the last boot.
    public internal(set) var memoryMap: [RegionInfo]
    /// The runtime's `FLASH_PROGRAM_END`.
    public internal(set) var runtimeEnd: UInt32
    /// The Nordic bootloader's settings page and GPREGRET (unused on MCUboot boards).
    public internal(set) var nordic = NordicBootloaderSettings()
    public let layout: MemoryLayout
    public let runtime: BoardRuntime
    /// Boots since the board was created (or loaded).
    public internal(set) var bootCount = 0

    init(flash: FlashMemory, storage: [String: [UInt8]], mode: BoardMode, runtimeEnd: UInt32,
         layout: MemoryLayout, runtime: BoardRuntime) {
        self.flash = flash
        self.storage = storage
        self.mode = mode
        self.runtimeEnd = runtimeEnd
        self.layout = layout
        self.runtime = runtime
        memoryMap = []
        rescanMemoryMap()
    }

    /// True while an interrupted partial flash forces pairing mode on every boot.
    public var flashIncomplete: Bool { storage[StorageKey.flashIncomplete] != nil }

    /// Boots: `RebootMode` (removed) or `flashIncomplete` (kept) or the user's button gesture
    /// select pairing mode, otherwise application mode; then the memory map is scanned again
    /// (docs/protocols/partial-flashing.md §3.7).
    mutating func boot(userRequestsPairing: Bool) {
        if nordic.bootloaderActive {
            bootCount += 1
            return
        }
        if storage.removeValue(forKey: StorageKey.rebootMode) != nil {
            mode = .pairing
        } else if flashIncomplete || userRequestsPairing {
            mode = .pairing
        } else {
            mode = .application
        }
        bootCount += 1
        rescanMemoryMap()
    }

    /// A bootloader replaced the whole application (an MCUboot swap or revert): the flag of
    /// an interrupted partial flash no longer applies to the program now in flash.
    /// (The runtime's `FLASH_PROGRAM_END` is kept from the board's creation; see the README's
    /// known limits.)
    mutating func applicationReplaced() {
        storage[StorageKey.flashIncomplete] = nil
    }

    mutating func rescanMemoryMap() {
        memoryMap = MemoryMapScan.regions(flash: flash, layout: layout, runtime: runtime, runtimeEnd: runtimeEnd)
    }
}
