import NordicDFUFrames

/// How a Nordic DFU runs: flow control, waits, timeouts and retry bounds.
///
/// The defaults follow the reference clients (docs/protocols/nordic-dfu.md §2.5, §3.5, §6): a packet receipt
/// every 12 packets on Secure DFU and every 8 on legacy DFU (the nRF51 bootloader has 8
/// receive buffers), 0.3 s after each Create so that the page erase ends before data comes,
/// three attempts per object.
public struct NordicDFUOptions: Sendable, Equatable {
    /// Secure DFU: a checksum notification after this many packets.
    public var securePacketReceipts: UInt16
    /// Legacy DFU: a receipt after this many packets.
    public var legacyPacketReceipts: UInt16
    /// Secure DFU: the wait after each data Create (the bootloader erases the page meanwhile).
    public var objectDelay: Duration
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
        securePacketReceipts: UInt16 = 12, legacyPacketReceipts: UInt16 = 8,
        objectDelay: Duration = .milliseconds(300), responseTimeout: Duration = .seconds(5),
        receiptTimeout: Duration = .seconds(2), startTimeout: Duration = .seconds(30),
        entryTimeout: Duration = .seconds(10), reconnectDelay: Duration = .seconds(1),
        reconnectAttempts: Int = 6, objectAttempts: Int = 3, timeoutLimit: Int = 12, linkLossLimit: Int = 8,
        retryLimit: Int = 48
    ) {
        self.securePacketReceipts = securePacketReceipts
        self.legacyPacketReceipts = legacyPacketReceipts
        self.objectDelay = objectDelay
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
