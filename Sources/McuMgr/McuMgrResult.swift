import SMP

/// What an upgrade did, for the user and for benchmarks.
public struct McuMgrResult: Sendable, Equatable {
    /// Image bytes sent in upload chunks, re-sent bytes included.
    public var bytesSent = 0
    /// Upload requests sent, re-sent ones included.
    public var chunks = 0
    /// Requests sent again after a timeout, a busy answer, a dropped chunk or a disconnect.
    public var retries = 0
    /// The most upload retries charged in a row without the device taking new bytes (what
    /// `McuMgrUpgradeOptions.maximumRetriesWithoutProgress` bounds).
    public var mostRetriesWithoutProgress = 0
    /// Image bytes sent more than once.
    public var resentBytes = 0
    /// Times the upload continued on a new connection after a disconnect.
    public var resumes = 0
    /// True when the device already held the image and nothing was uploaded.
    public var uploadSkipped = false
    /// True when the device already ran the image, confirmed, and nothing was sent but a state read.
    public var alreadyInstalled = false
    /// Writes handed to the link (all commands).
    public var writes = 0
    /// The largest write and the largest frame sent, in bytes.
    public var largestWrite = 0
    public var largestFrame = 0
    /// The pipeline depth and frame limit the upload used.
    public var pipelineDepth = 1
    public var frameLimit = 0
    /// The device's slots at the end (the final state read).
    public var finalSlots: [ImageSlotState] = []

    public init() {}
}
