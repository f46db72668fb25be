// The McuMgr module: the firmware upgrade of an MCUboot device over SMP, as a
// pure `FlowMachine` (`McuMgrUpgrade`). It speaks the SMP module's frames and
// leaves every byte of I/O and every clock to its driver.
import SMP

/// What to upload: one MCUboot image and the two hashes that identify it.
public struct McuMgrUpgradeImage: Sendable, Equatable {
    /// The whole MCUboot image file (header, body, TLVs).
    public var bytes: [UInt8]
    /// The image's SHA-256 TLV (32 bytes): what the device reports in its slot list
    /// and what test and confirm name the image by. Not the hash of the file.
    public var hash: [UInt8]
    /// SHA-256 of the whole file (32 bytes), sent as `sha` in the first upload chunk:
    /// the device's identity of the upload session (resume) and its final integrity check.
    public var fileSHA256: [UInt8]
    /// The image number (0 for single-image devices; 1 for a network core).
    public var imageNumber: Int

    public init(bytes: [UInt8], hash: [UInt8], fileSHA256: [UInt8], imageNumber: Int = 0) {
        self.bytes = bytes
        self.hash = hash
        self.fileSHA256 = fileSHA256
        self.imageNumber = imageNumber
    }
}

/// Which steps follow the upload (docs/protocols/mcumgr-smp.md §4.1).
public enum McuMgrUpgradeMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// Test, reset (the device swaps and boots the image once), then confirm it and verify.
    case testAndConfirm
    /// Confirm the uploaded image for the next boot, reset, verify.
    case confirmOnly
    /// Test, reset, verify that the image runs (it reverts on the next reset unless confirmed).
    case testOnly
    /// Upload and reset only; the device decides what to boot.
    case uploadOnly
}

/// How the upgrade behaves on the link. The defaults follow Nordic's reference clients
/// (docs/protocols/mcumgr-smp.md §4.4): 40 s for the first chunk (the device erases), 10 s otherwise.
public struct McuMgrUpgradeOptions: Sendable, Equatable {
    public var mode: McuMgrUpgradeMode = .testAndConfirm
    /// Upload requests in flight at once; nil derives it from the device (`buf_count − 1`,
    /// at least 1). 1 turns pipelining off. A device without the parameters command gets 1.
    public var pipelineDepth: Int?
    /// True: frames up to the device's `buf_size`, each cut into writes of MTU − 3 bytes
    /// (SMP reassembly). False, or when the device does not report its buffers: every frame fits one write.
    public var useReassembly = true
    /// Upload chunk lengths are rounded down to a multiple of this (the last chunk excepted).
    public var byteAlignment = 1
    /// SMP version of the requests (v2 by default; the device may answer in v1).
    public var smpVersion: SMPVersion = .v2
    /// Time allowed for the answer to the first upload chunk (the device may erase its slot first).
    public var firstChunkTimeout: Duration = .seconds(40)
    /// Time allowed for any other answer.
    public var requestTimeout: Duration = .seconds(10)
    /// How long the upload waits, once the device has answered that it expects an earlier
    /// offset, for the answers to the chunks still in flight (the device drops them and answers
    /// each at once) before it sends again from that offset.
    public var resyncWait: Duration = .seconds(1)
    /// Pause before re-sending a request the device refused as busy (`EBUSY`).
    public var busyRetryDelay: Duration = .milliseconds(100)
    /// Re-sends allowed for one request other than an upload chunk (a state read, a test, a
    /// confirm, a reset) before giving up.
    public var maximumRetriesPerRequest = 3
    /// Upload retries allowed since the device last took new bytes, that is since its offset
    /// last passed every offset it had reported before. The budget is tied to progress: an
    /// upload that keeps advancing on a poor link goes on, one that stops advancing ends here.
    public var maximumRetriesWithoutProgress = 10
    /// Re-sends allowed over the whole run, however the upload advances: a ceiling for a link
    /// that loses nearly everything but still lets a little through.
    public var maximumRetriesPerRun = 1000
    /// Unanswered requests in a row after which the link is closed and opened again (which
    /// also clears a half-received frame on the device); 0 never reconnects for timeouts.
    public var reconnectAfterTimeouts = 2
    /// Full re-uploads allowed when the device reports that the uploaded image does not match.
    public var maximumUploadRestarts = 1
    /// How long the device needs after `reset` to swap the slots and advertise again: the
    /// upgrade waits this long (from the reset answer) before it reconnects. A reconnection
    /// that comes too early costs nothing but a retry (a BlueZ connect waits for the board to
    /// advertise), so the default is short: 2 s, what `bitflash flash` has always used.
    public var estimatedSwapTime: Duration = .seconds(2)
    /// Connection attempts after each disconnect before giving up.
    public var reconnectAttempts = 5
    /// Pause before reconnecting after an unexpected disconnect, and between refused attempts.
    public var reconnectDelay: Duration = .seconds(1)
    /// Unexpected disconnects tolerated in a row without progress (the upload advancing or a
    /// request answered in between).
    public var maximumDisconnects = 5
    /// Unexpected disconnects tolerated over the whole run.
    public var maximumDisconnectsPerRun = 20
    /// The longest the whole upgrade may take (reconnections and the swap included); the
    /// upgrade ends with an error when it is still running then.
    public var maximumDuration: Duration = .seconds(600)
    /// Time allowed between the reset answer and the device dropping the link.
    public var resetDisconnectTimeout: Duration = .seconds(5)
    /// The size of the board's slot the image goes to, when known (from the board, or its
    /// profile): a larger image is refused before anything is sent.
    public var slotSize: SlotSize?
    /// Bytes of each frame shown in hex in `.trace` reports (0 turns frame traces off).
    public var traceBytes = 48

    public init(mode: McuMgrUpgradeMode = .testAndConfirm, pipelineDepth: Int? = nil, useReassembly: Bool = true) {
        self.mode = mode
        self.pipelineDepth = pipelineDepth
        self.useReassembly = useReassembly
    }

    /// Why these options cannot work, or nil.
    var problem: String? {
        if let depth = pipelineDepth, depth < 1 { return "pipeline depth must be at least 1, got \(depth)" }
        if byteAlignment < 1 { return "byte alignment must be at least 1, got \(byteAlignment)" }
        if maximumRetriesPerRequest < 0 || maximumRetriesWithoutProgress < 0 || maximumRetriesPerRun < 0 {
            return "retry limits must not be negative"
        }
        if maximumDisconnects < 0 || maximumDisconnectsPerRun < 0 { return "disconnect limits must not be negative" }
        if maximumDuration <= .zero { return "the time limit must be positive, got \(maximumDuration)" }
        if reconnectAttempts < 1 { return "at least one reconnect attempt is needed, got \(reconnectAttempts)" }
        return nil
    }
}
