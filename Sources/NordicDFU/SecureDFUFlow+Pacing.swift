import NordicDFUFrames

/// When the Secure DFU bootloader can take the next packet of an object (docs/nordic-dfu.md, "Pacing").
///
/// The V2 bootloader queues every flash operation in fstorage's queue of 16 entries and drops a
/// packet that finds it full (`nrf_dfu_req_handler.c` `on_data_obj_write_request`). A data
/// Create queues the erase of the object's pages and is answered at once; each packet queues
/// its write; a data Execute is answered only once the queue is empty; the init packet's
/// Execute queues the settings write and its backup (four operations) and is answered at once.
/// A receipt or checksum answer says what the bootloader queued, not what it wrote, so the
/// flow paces by time. The board's radio misses every connection event while the chip erases a
/// page (the SoftDevice runs flash work between radio events and an erase does not fit between
/// them, docs/nordic-dfu.md, "Pacing"): a Create's answer leaves only after its erase, and a
/// packet sent during the erase reaches the board after it. So the flow counts from the moment
/// `s` it wrote the Create (the erase cannot start before the Create arrives):
///
/// - the first `queue − 1 − pending` packets go at once, beside the erase and any settings
///   operations still `pending` (the settings write may still run when the first object's
///   Create comes);
/// - the erase has ended by `e = max(s, settings done) + pages × pageErase`, or reaches the board
///   only after it; then the queue holds at most those packets' writes, so packets up to index
///   `queue − 1` go at `e`;
/// - packet `i` beyond goes at `e + (i − queue + 1) × w`, `w` the write time of a full packet
///   (its words × `wordWrite`): one more for each write the flash has finished.
///
/// Every bound is an upper bound on the bootloader's work (its chip's maximum erase and write
/// times), so the queue never overflows on time; a slower erase (a worn page) only costs the
/// packets it drops, which the object's checksum finds.
public struct SecureDFUPacing: Sendable, Equatable {
    /// Until when flash work the flow knows of may run, and how many operations it is.
    public private(set) var busyUntil: Duration = .zero
    public private(set) var pendingOperations = 0
    /// The current object: packets that go at once, when its erase has ended, a packet's write time.
    public private(set) var atOnce = Int.max
    public private(set) var eraseEnd: Duration = .zero
    public private(set) var packetWrite: Duration = .zero
    public private(set) var queue = SecureDFUBootloaderLimits.flashQueue

    public init() {}

    /// The init packet's Execute, written at `now`, was answered: the settings and their backup are being written.
    public mutating func settingsQueued(at now: Duration, options: NordicDFUOptions) {
        let words = (SecureDFUBootloaderLimits.settingsBytes + 3) / 4
        busyUntil = max(busyUntil, now) + (options.pageErase + options.wordWrite * words) * 2
        pendingOperations += SecureDFUBootloaderLimits.settingsOperations
    }

    /// A data Execute was answered at `now`: the flash queue was empty.
    public mutating func flashIdle(at now: Duration) {
        busyUntil = now
        pendingOperations = 0
    }

    /// A data Create of `bytes` in `packets` packets, written at `now`, was answered.
    public mutating func objectCreated(
        at now: Duration, bytes: Int, packets: Int, packetSize: Int, options: NordicDFUOptions
    ) {
        queue = max(options.secureFlashQueue, 1)
        let pending = now < busyUntil ? pendingOperations : 0
        let pages = (bytes + SecureDFUBootloaderLimits.pageSize - 1) / SecureDFUBootloaderLimits.pageSize
        eraseEnd = max(now, busyUntil) + options.pageErase * max(pages, 1)
        atOnce = max(queue - 1 - pending, 0)
        packetWrite = options.wordWrite * ((packetSize + 3) / 4)
        // Until an Execute says the queue is empty, count this object's work as pending (a
        // Create after a checksum mismatch comes without one).
        busyUntil = eraseEnd + packetWrite * packets
        pendingOperations = pending + 1 + packets
    }

    /// The earliest time packet `index` of the object may be sent.
    public func sendTime(ofPacket index: Int) -> Duration {
        if index < atOnce { return .zero }
        return eraseEnd + packetWrite * max(index - (queue - 1), 0)
    }

    /// When to wake up to send from packet `index` on: once the next `queue − 1` packets (or
    /// all the rest) may go, so that the flow wakes a few times per object, not per packet.
    public func wakeTime(from index: Int, packets: Int) -> Duration {
        let last = min(index + max(queue - 1, 1), packets) - 1
        return sendTime(ofPacket: max(last, index))
    }
}
