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
/// (nRF52833 Product Specification, NVMC electrical specification; `DeviceTiming`).
///
/// The radio and the flash take turns: the SoftDevice runs a flash operation as a timing-event
/// of its own, in time no radio event uses, and halts the CPU for most of it (S113/S140
/// SoftDevice Specification, "Flash memory API", "Flash API timing", "Flash API processor
/// usage patterns": a page erase up to 90 ms). A page erase does not fit between two connection
/// events of a 7.5-30 ms link; the flash timing-event then takes a higher priority once it has
/// been blocked often enough, and the board misses the connection events the erase covers (a
/// peripheral at 15 ms stops answering during an erase and carries on after it: Nordic DevZone
/// 63219, "Flash operations can't be done at the same time as the radio is running"). So an
/// erase `silencesRadio` from its start to its end. How many blocked attempts the escalation
/// takes is not documented: none is modelled (the erase starts when the queue reaches it). A
/// write of a packet is 20-byte chunks (`NRF_FSTORAGE_SD_MAX_WRITE_SIZE`) of about 0.2 ms each,
/// which fit between events: writes run beside the link.
struct SecureDFUFlashQueue: Sendable, Equatable {
    static let slots = SecureDFUBootloaderLimits.flashQueue
    static let receiveBuffers = SecureDFUBootloaderLimits.receiveBuffers

    struct Operation: Sendable, Equatable {
        var start: VirtualInstant
        var end: VirtualInstant
        /// A page erase: the board's radio misses every connection event from `start` to `end`.
        var silencesRadio: Bool
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
    mutating func enqueue(
        _ duration: Duration, holdsBuffer: Bool = false, silencesRadio: Bool = false, at now: VirtualInstant
    ) -> VirtualInstant? {
        drain(at: now)
        guard operations.count < Self.slots else { return nil }
        let start = max(now, operations.last?.end ?? now)
        let end = start + duration
        operations.append(Operation(start: start, end: end, silencesRadio: silencesRadio, holdsBuffer: holdsBuffer))
        return end
    }

    /// When the radio can take part in a connection event again if one falls at `t`: the end of
    /// the erases running then and right after one another; nil when no erase runs at `t`.
    func radioSilent(at t: VirtualInstant) -> VirtualInstant? {
        var until: VirtualInstant?
        for op in operations where op.silencesRadio {
            let from = until ?? t
            if op.start <= from, from < op.end { until = op.end }
        }
        return until
    }

    /// When the last queued operation ends (`now` when the queue is empty): fstorage is busy until then.
    mutating func idle(after now: VirtualInstant) -> VirtualInstant {
        drain(at: now)
        return operations.last?.end ?? now
    }

    /// A reset loses the queue.
    mutating func clear() { operations.removeAll() }
}
