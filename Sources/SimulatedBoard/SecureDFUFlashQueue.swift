import NordicDFUFrames

/// The Secure DFU bootloader's flash work and the buffers that wait for it
/// (docs/protocols/nordic-dfu.md §2.2, §2.4; docs/behaviours.md).
///
/// The V2 bootloader hands every flash operation to fstorage's SoftDevice backend, which
/// runs them one after the other from a queue of `NRF_FSTORAGE_SD_QUEUE_SIZE` = 16 entries
/// (V2 bootloader `sdk_config.h`); an entry is freed only when its operation has finished
/// (nRF5 SDK 16 `nrf_fstorage_sd.c` `nrf_fstorage_sys_evt_handler` frees it after
/// `event_send`), so the running one counts. A request that finds the queue full fails with
/// `NRF_ERROR_NO_MEM` (`nrf_fstorage_sd.c` `write`, `erase`).
///
/// Each firmware packet waits in one of the BLE transport's receive buffers,
/// `MAX_DFU_BUFFERS` = 4096 / 244 + 1 = 17 (`nrf_dfu_ble.c`), from its arrival until its flash
/// write has finished (`on_flash_write` frees it); with 16 queue entries the queue is full
/// before the buffers are, so the buffer check below never bites on its own.
///
/// Durations: a page erase as the chip's `tERASEPAGE`, a write as its words times `tWRITE`
/// (nRF52833 Product Specification, NVMC electrical specification; `DeviceTiming`). The
/// SoftDevice's scheduling of each 20-byte chunk (`NRF_FSTORAGE_SD_MAX_WRITE_SIZE`) between
/// radio events is not modelled: flash work runs beside the link.
struct SecureDFUFlashQueue: Sendable, Equatable {
    static let slots = SecureDFUBootloaderLimits.flashQueue
    static let receiveBuffers = SecureDFUBootloaderLimits.receiveBuffers

    struct Operation: Sendable, Equatable {
        var end: VirtualInstant
        /// A firmware packet's write, which holds a receive buffer until it ends.
        var holdsBuffer: Bool
    }

    /// The queued operations in order; the first runs (or ran) first. At most `slots`.
    private(set) var operations: [Operation] = []

    /// Forgets what has finished by `now`.
    mutating func drain(at now: VirtualInstant) {
        var done = 0
        while done < operations.count, operations[done].end <= now { done += 1 }
        if done > 0 { operations.removeFirst(done) }
    }

    /// Operations queued or running at `now`.
    mutating func count(at now: VirtualInstant) -> Int {
        drain(at: now)
        return operations.count
    }

    /// Whether a packet arriving at `now` finds a free receive buffer.
    mutating func hasFreeBuffer(at now: VirtualInstant) -> Bool {
        drain(at: now)
        return operations.lazy.filter(\.holdsBuffer).count < Self.receiveBuffers
    }

    /// Queues an operation of `duration` at `now`: it starts when the ones before it have
    /// finished. Returns its end, or nil when the queue is full (the request fails).
    @discardableResult
    mutating func enqueue(_ duration: Duration, holdsBuffer: Bool = false, at now: VirtualInstant) -> VirtualInstant? {
        drain(at: now)
        guard operations.count < Self.slots else { return nil }
        let start = max(now, operations.last?.end ?? now)
        let end = start + duration
        operations.append(Operation(end: end, holdsBuffer: holdsBuffer))
        return end
    }

    /// When the last queued operation ends (`now` when the queue is empty): fstorage is busy until then.
    mutating func idle(after now: VirtualInstant) -> VirtualInstant {
        drain(at: now)
        return operations.last?.end ?? now
    }

    /// A reset loses the queue.
    mutating func clear() { operations.removeAll() }
}
