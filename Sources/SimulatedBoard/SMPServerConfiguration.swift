import FirmwareImage
import SMP

/// The figures of the simulated McuMgr SMP server (a Zephyr `smp_svr`-style build with
/// MCUboot), stated here once:
///
/// - GATT: the SMP service and characteristic (write without response + notify); the board
///   profile's ATT MTU is 247 with an LL data length of 251, so one write or notification
///   carries up to 244 bytes.
/// - SMP reassembly: `buf_size` 2475 bytes (five 495-byte writes at MTU 498, the nRF Connect
///   SDK Bluetooth overlay's figure) and `buf_count` 4 net buffers. A frame that starts when
///   every buffer is taken is refused (ATT "insufficient resources"); the response of the
///   request being processed needs a buffer too.
/// - Slots (MCUboot swap without scratch, mode 3): the primary slot lies in the chip's flash
///   from one page below the application start to the runtime's scratch page, so that an
///   image built with a one-page header (`imgtool --header-size 0x1000 --pad-header`) puts its
///   payload exactly at the application start. The secondary slot, of the same size, is an
///   external SPI flash with the same page size and the same erase and write costs.
/// - Work: each request takes `commandTime` of CPU time; an upload chunk adds the erase of
///   every secondary page it reaches for the first time (progressive erase) and its word
///   writes; `reset` answers, then resets after `resetDelay`.
/// - Swap at boot: for each of the `n` pages covered by the larger of the two images, both
///   slots' pages are erased and rewritten:
///   `swap = n × 2 × (pageErase + pageSize / 4 × wordWrite)`. On nRF52833 figures a 4096-byte
///   page costs 2 × (85 ms + 1024 × 41 µs) = 253.968 ms. A revert costs the same.
public struct SMPServerConfiguration: Sendable, Equatable, Codable {
    /// `buf_size`: the largest frame the server reassembles, header included.
    public var bufferSize: Int
    /// `buf_count`: net buffers shared by incoming frames and responses.
    public var bufferCount: Int
    /// Bytes of one notification (ATT MTU − 3).
    public var notificationSize: Int
    /// First address of the primary slot in the chip's flash.
    public var primarySlotStart: UInt32
    /// Size of each slot.
    public var slotSize: UInt32
    public var pageSize: UInt32
    /// CPU time to decode, handle and encode one request.
    public var commandTime: Duration
    /// From the reset answer to the reset (Zephyr `CONFIG_MCUMGR_GRP_OS_RESET_MS` defaults to 250 ms).
    public var resetDelay: Duration
    /// How responses are written: `.zcbor` (indefinite-length maps and lists, keys in
    /// Zephyr's order) as Zephyr does, or `.deterministic`.
    public var payloadEncoding: SMPPayloadEncoding = .zcbor
    /// `CONFIG_IMG_ENABLE_IMAGE_CHECK`: the answer to the upload's last chunk carries `match`
    /// (the SHA-256 of the slot against the `sha` of the first chunk), and a first chunk whose
    /// 32-byte `sha` the slot already matches is answered at once with the whole length.
    public var imageCheck = true
    /// `CONFIG_MCUMGR_GRP_IMG_ALLOW_ERASE_PENDING` (Zephyr's default, y): an upload or an erase
    /// may overwrite a secondary slot that is marked for test or confirmed for the next boot.
    public var allowErasePending = true
    /// Fault: a request is answered `rc` 10 (EBUSY) instead of being handled.
    public var busyAnswerProbability: Double = 0
    /// Fault: an upload chunk fails to write (IMG_MGMT_ERR_FLASH_WRITE_FAILED).
    public var flashWriteFailureProbability: Double = 0
    /// Fault: writing the MCUboot trailer fails for these state writes, which are answered
    /// IMG_MGMT_ERR_FLASH_WRITE_FAILED and change nothing (Zephyr `img_mgmt_state.c`,
    /// `img_mgmt_set_next_boot_slot_common`: `boot_set_next` returning BOOT_EFLASH).
    public var failingTrailerWrites: Set<TrailerWrite> = []

    /// A state write that sets the MCUboot trailer.
    public enum TrailerWrite: String, Sendable, Equatable, Hashable, Codable {
        /// Marks an image for a test boot (`confirm` false).
        case test
        /// Confirms an image (`confirm` true).
        case confirm
    }

    public init(
        bufferSize: Int = 2475, bufferCount: Int = 4, notificationSize: Int = 244,
        primarySlotStart: UInt32, slotSize: UInt32, pageSize: UInt32,
        commandTime: Duration = .microseconds(200), resetDelay: Duration = .milliseconds(250)
    ) {
        self.bufferSize = bufferSize
        self.bufferCount = bufferCount
        self.notificationSize = notificationSize
        self.primarySlotStart = primarySlotStart
        self.slotSize = slotSize
        self.pageSize = pageSize
        self.commandTime = commandTime
        self.resetDelay = resetDelay
    }

    /// The standard server for a board layout: the primary slot from one page below the
    /// application start up to the scratch page.
    public static func standard(for layout: MemoryLayout, attMTU: Int = 247) -> SMPServerConfiguration {
        let slot = layout.mcubootPrimarySlot
        return SMPServerConfiguration(
            notificationSize: attMTU - 3, primarySlotStart: slot.lowerBound,
            slotSize: UInt32(slot.count), pageSize: layout.pageSize)
    }

    /// The primary slot's addresses.
    public var primarySlot: Range<UInt32> { primarySlotStart..<(primarySlotStart + slotSize) }

    /// The MCUboot header size that puts an image's payload at the application start.
    public var headerSize: Int { Int(pageSize) }

    /// The modelled swap (or revert) of `pages` pages: both slots erased and rewritten page by page.
    public func swapDuration(pages: Int, pageErase: Duration, wordWrite: Duration) -> Duration {
        (pageErase + wordWrite * Int(pageSize / 4)) * (2 * pages)
    }
}
