import FirmwareImage
import NordicDFUFrames

/// What a Nordic bootloader keeps across resets: its settings page and the GPREGRET flag
/// the application sets before resetting into it (docs/protocols/nordic-dfu.md §2.1, §2.4, §3.2).
public struct NordicBootloaderSettings: Sendable, Equatable, Codable {
    /// The bootloader runs ("DfuTarg" advertises) instead of the application.
    public var bootloaderActive = false
    /// GPREGRET = 0xB1: the next reset enters the bootloader.
    public var enterOnReset = false
    /// The application in flash may be started. Cleared by the secure bootloader's init
    /// Execute and by the legacy bootloader's Start DFU; set again by a completed update.
    public var applicationValid = true
    /// Secure DFU: the init command stored at its Execute (nil when none is stored).
    public var initCommand: [UInt8]?

    public init() {}

    /// The decision at every reset: the bootloader when asked for or when the application is invalid.
    mutating func reset() {
        bootloaderActive = enterOnReset || !applicationValid
        enterOnReset = false
    }
}

extension DeviceState {
    /// An MCUboot swap or revert put another application in the primary slot: the runtime end
    /// is that runtime's (the memory map scans from it at the next boot).
    mutating func applicationSwapped() {
        let app = layout.applicationStart..<layout.scratchPage
        guard let bytes = try? flash.read(app) else { return }
        var image = MemoryImage()
        try? image.write(bytes, at: app.lowerBound)
        runtimeEnd = MemoryMapScan.deriveRuntimeEnd(image: image, layout: layout)
    }

    /// A Nordic DFU replaced the application: the runtime end is the new runtime's (the
    /// partial-flashing memory map scans from it at the next boot). The runtime's key-value
    /// page stays as it was, `flashIncomplete` included: the V2 bootloader erases only the pages
    /// of the new image and keeps the 12 KiB below itself (`NRF_DFU_APP_DATA_AREA_SIZE`), the
    /// legacy bootloader erases only the image's size from the application start
    /// (docs/protocols/board-storage.md §4).
    mutating func nordicApplicationReplaced(start: UInt32, bytes: [UInt8]) {
        var image = MemoryImage()
        try? image.write(bytes, at: start)
        runtimeEnd = MemoryMapScan.deriveRuntimeEnd(image: image, layout: layout)
    }
}

extension SimulatedBoard {
    /// True when the board's profile has a Nordic bootloader (Secure or legacy DFU).
    public var hasNordicBootloader: Bool {
        profile.services.contains(.secureDFU) || profile.services.contains(.legacyDFU)
    }

    /// True while the board runs its Nordic bootloader ("DfuTarg").
    public var inNordicBootloader: Bool { device.nordic.bootloaderActive }

    /// The counters of the board's Nordic bootloader, if it has one.
    public var nordicStatistics: NordicBootloaderStatistics? {
        services.lazy.compactMap {
            ($0 as? SecureDFUBootloader)?.statistics ?? ($0 as? LegacyDFUBootloader)?.statistics
        }.first
    }

    /// The Nordic bootloader's persistent settings.
    public var nordicSettings: NordicBootloaderSettings { device.nordic }

    /// Leaves the board as an aborted Nordic DFU does: the old application invalid and
    /// partly erased, the board in its bootloader ("DfuTarg") at every reset.
    /// - Throws: `SimulatedBoardError.noNordicBootloader` for a board without one.
    public mutating func strandInBootloader() throws {
        guard hasNordicBootloader else { throw SimulatedBoardError.noNordicBootloader(profile.board.displayName) }
        let layout = profile.layout
        try device.flash.erasePage(at: layout.applicationStart)
        device.nordic.applicationValid = false
        device.nordic.initCommand = nil
        device.nordic.bootloaderActive = true
        for i in services.indices { services[i].didBoot(device: device) }
    }

    /// The stock profile of `board`: partial flashing in the application and the board's
    /// own Nordic bootloader (Secure DFU on nRF52833, legacy DFU on nRF51).
    public static func stockProfile(
        _ board: Board, name: String? = nil, address: String = "F0:0D:00:00:00:01",
        bluetoothInApplicationMode: Bool = true
    ) -> BoardProfile {
        BoardProfile(
            board: board, name: name, address: address,
            services: [.partialFlashing, board.family == .nrf51 ? .legacyDFU : .secureDFU],
            bluetoothInApplicationMode: bluetoothInApplicationMode)
    }
}
