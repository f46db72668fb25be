import FirmwareImage

/// How long the board's own work takes, per chip family.
///
/// Flash figures are the product specifications' values as quoted in
/// docs/protocols/link-model.md, "Device-side costs": nRF52833 page erase 85 ms and
/// word write 41 µs; nRF51822 page erase 22.3 ms and word write 46.3 µs.
/// The other two figures are modelling assumptions, not measurements:
/// - `reboot`: 300 ms from reset until the board advertises again;
/// - `eventDispatch`: 1 ms from the BLE write handler raising a flash event until the
///   runtime's fiber starts handling it (CODAL/DAL queue it on the message bus).
public struct DeviceTiming: Sendable, Equatable, Codable {
    /// Erasing one flash page.
    public var pageErase: Duration
    /// Writing one 32-bit word.
    public var wordWrite: Duration
    /// From reset until the board is connectable again.
    public var reboot: Duration
    /// From a write handler raising an event until its handler runs.
    public var eventDispatch: Duration

    public init(
        pageErase: Duration, wordWrite: Duration, reboot: Duration = .milliseconds(300),
        eventDispatch: Duration = .milliseconds(1)
    ) {
        self.pageErase = pageErase
        self.wordWrite = wordWrite
        self.reboot = reboot
        self.eventDispatch = eventDispatch
    }

    /// The figures for a chip family.
    public static func of(_ family: ChipFamily) -> DeviceTiming {
        switch family {
        case .nrf52833: return DeviceTiming(pageErase: .milliseconds(85), wordWrite: .microseconds(41))
        case .nrf51: return DeviceTiming(pageErase: .microseconds(22_300), wordWrite: .nanoseconds(46_300))
        }
    }

    /// Writing one 64-byte partial-flashing block (16 words).
    public var blockWrite: Duration { wordWrite * 16 }

    /// The least time the runtime takes to store `flashIncomplete` in an empty key-value store:
    /// CODAL erases the store page and burns its 256-byte RAM scratch (codal-core
    /// `KeyValueStorage::put`); DAL erases its flash scratch page, writes the header and the
    /// pair there, erases the store page and copies them back (microbit-dal
    /// `MicroBitStorage::put`), 14 words each way.
    public func flashIncompleteStore(_ family: ChipFamily) -> Duration {
        switch family {
        case .nrf52833: return pageErase + wordWrite * 64
        case .nrf51: return pageErase * 2 + wordWrite * 28
        }
    }
}
