import NordicDFUFrames

/// How a Nordic DFU runs: flow control, waits, timeouts and retry bounds.
///
/// Secure DFU is paced by what the V2 bootloader can hold (docs/nordic-dfu.md, "Pacing"):
/// its flash queue has `secureFlashQueue` entries, the page erase a Create starts takes one, and
/// a packet that finds the queue full is dropped. So after each Create's answer the flow sends
/// as many packets as the queue holds beside the erase (and beside the settings writes after
/// the init packet's Execute), and the rest once the erase (`pageErase` per page) must have
/// ended, one more per packet write time (`wordWrite` per word). No receipts on Secure DFU:
/// the bootloader sends one when a packet is queued, not written, so it paces nothing, and each
/// object's checksum finds any loss. Legacy DFU keeps a receipt every 8 packets (the nRF51
/// bootloader's 8 receive buffers, docs/nordic-dfu.md). Three attempts per object.
public struct NordicDFUOptions: Sendable, Equatable {
    /// Secure DFU: a checksum notification after this many packets.
    public var securePacketReceipts: UInt16
    /// Legacy DFU: a receipt after this many packets.
    public var legacyPacketReceipts: UInt16
    /// Secure DFU: the bootloader chip's page erase time (nRF52833 `tERASEPAGE`, 85 ms).
    public var pageErase: Duration
    /// Secure DFU: the bootloader chip's word write time (nRF52833 `tWRITE`, 41 µs).
    public var wordWrite: Duration
    /// Secure DFU: the bootloader's flash queue entries (`NRF_FSTORAGE_SD_QUEUE_SIZE`, 16).
    public var secureFlashQueue: Int
    /// The wait for a control-point answer.
    public var responseTimeout: Duration
    /// The wait for a packet receipt before asking for the checksum.
    public var receiptTimeout: Duration
    /// Legacy DFU: the wait for the answer to Start DFU, which follows the erase of the whole application.
    public var startTimeout: Duration
    /// The wait for the buttonless answer, and then for the board to reset.
    public var entryTimeout: Duration
    /// The wait before reconnecting after the board reset.
    public var reconnectDelay: Duration
    /// Connection attempts in a row before giving up.
    public var reconnectAttempts: Int
    /// Attempts per object (checksum mismatches) before giving up.
    public var objectAttempts: Int
    /// Unanswered requests in one run before giving up.
    public var timeoutLimit: Int
    /// Link losses in one run before giving up.
    public var linkLossLimit: Int
    /// Retries of all kinds in one run (objects sent again, requests repeated, restarts) before giving up.
    public var retryLimit: Int

    public init(
        securePacketReceipts: UInt16 = 0, legacyPacketReceipts: UInt16 = 8,
        pageErase: Duration = .milliseconds(85), wordWrite: Duration = .microseconds(41),
        secureFlashQueue: Int = SecureDFUBootloaderLimits.flashQueue,
        responseTimeout: Duration = .seconds(5),
        receiptTimeout: Duration = .seconds(2), startTimeout: Duration = .seconds(30),
        entryTimeout: Duration = .seconds(10), reconnectDelay: Duration = .seconds(1),
        reconnectAttempts: Int = 6, objectAttempts: Int = 3, timeoutLimit: Int = 12, linkLossLimit: Int = 8,
        retryLimit: Int = 48
    ) {
        self.securePacketReceipts = securePacketReceipts
        self.legacyPacketReceipts = legacyPacketReceipts
        self.pageErase = pageErase
        self.wordWrite = wordWrite
        self.secureFlashQueue = secureFlashQueue
        self.responseTimeout = responseTimeout
        self.receiptTimeout = receiptTimeout
        self.startTimeout = startTimeout
        self.entryTimeout = entryTimeout
        self.reconnectDelay = reconnectDelay
        self.reconnectAttempts = reconnectAttempts
        self.objectAttempts = objectAttempts
        self.timeoutLimit = timeoutLimit
        self.linkLossLimit = linkLossLimit
        self.retryLimit = retryLimit
    }
}

/// Which Nordic DFU protocol ran.
public enum NordicDFUProtocol: String, Sendable, Equatable, Codable {
    /// Secure DFU (micro:bit V2, Calliope mini 3).
    case secure
    /// Legacy DFU (micro:bit V1, Calliope mini 1/2).
    case legacy
}

/// What a Nordic DFU did.
public struct NordicDFUResult: Sendable, Equatable {
    public var dfuProtocol: NordicDFUProtocol
    /// Size of the application binary.
    public var applicationBytes: Int
    /// Init and firmware bytes written to the packet characteristic, resends included.
    public var bytesSent: Int
    /// Objects recreated, requests repeated, transfers restarted.
    public var retries: Int
    /// Connections made to the bootloader.
    public var bootloaderConnections: Int
    /// The board was already in its bootloader when the flow started.
    public var recoveredFromBootloader: Bool
    /// The bootloader checked the whole image (SHA-256 on Secure DFU, CRC-16 on legacy DFU) and started it.
    public var verified: Bool
    /// The flow ended on a connection to the restarted application: the bootloader's answer to
    /// the last Execute was lost (it resets 100 ms after answering, and a radio shared with
    /// other boards can hold the answer back longer), so the flow connected again and found the
    /// new application running. The board has already restarted; the link is up.
    public var endedOnApplication = false

    public init(
        dfuProtocol: NordicDFUProtocol, applicationBytes: Int, bytesSent: Int = 0, retries: Int = 0,
        bootloaderConnections: Int = 0, recoveredFromBootloader: Bool = false, verified: Bool = false
    ) {
        self.dfuProtocol = dfuProtocol
        self.applicationBytes = applicationBytes
        self.bytesSent = bytesSent
        self.retries = retries
        self.bootloaderConnections = bootloaderConnections
        self.recoveredFromBootloader = recoveredFromBootloader
        self.verified = verified
    }
}
