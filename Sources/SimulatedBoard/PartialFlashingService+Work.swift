import Diagnostics
import PartialFlashingFrames
import Transport

/// The flash work of the partial-flashing service: the runtime's event handler, which runs
/// after the write handler returned, one event at a time.
extension PartialFlashingService {
    mutating func enqueue(_ job: Job, effects: inout ServiceEffects) {
        jobs.append(job)
        startNextJob(effects: &effects)
    }

    private mutating func startNextJob(effects: inout ServiceEffects) {
        guard !busy, !jobs.isEmpty else { return }
        busy = true
        effects.schedule(after: effects.timing.eventDispatch, tag: Step.begin.rawValue)
    }

    public mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
        guard busy, !hangs, let job = jobs.first, let step = Step(rawValue: tag) else { return }
        switch (job, step) {
        case (.flashData, .begin):
            // `storage.get("flashIncomplete")`, and a `put` when it is absent, which erases and
            // rewrites the store's page before the block is touched (a `put` of the same value
            // writes nothing; a full CODAL store refuses it silently).
            let (erases, words) = (device.flash.storageErases, device.flash.storageWords)
            if device.keyValueStore.get(StorageKey.flashIncomplete, flash: &device.flash) == nil {
                device.putKey(StorageKey.flashIncomplete, [0x01])
            }
            let cost =
                effects.timing.pageErase * (device.flash.storageErases - erases)
                + effects.timing.wordWrite * (device.flash.storageWords - words)
            guard cost == .zero else { return effects.schedule(after: cost, tag: Step.stored.rawValue) }
            eraseThenBurn(device: &device, effects: &effects)
        case (.flashData, .stored):
            eraseThenBurn(device: &device, effects: &effects)
        case (.flashData, .eraseDone):
            do {
                try device.flash.erasePage(at: flashPointer)
                effects.note("partial flashing: erased page \(Hex.number(flashPointer, uppercase: false))")
                burn(device: &device, effects: &effects)
            } catch {
                hardFault("\(error)", effects: &effects)
            }
        case (.flashData, .burnDone):
            effects.notify(PartialFlashingGATT.characteristic, PartialFlashingNotification.writeSuccess.bytes)
            finishJob(effects: &effects)
        case (.endOfTransmission, .begin):
            flashPointer = offset
            burn(device: &device, effects: &effects)
        case (.endOfTransmission, .burnDone):
            // CODAL also rewrites the bootloader settings and erases user storage; DAL's
            // source-header scrub never matches (docs/protocols/partial-flashing.md §3.5). Neither changes what is simulated.
            device.removeKey(StorageKey.flashIncomplete)
            effects.note("partial flashing: end of transmission, rebooting")
            effects.requestReboot()
        case (.restartInPairingMode, .begin):
            // `restartInBLEMode`: `put("RebootMode")` (CODAL stores 4 bytes of MICROBIT_MODE_PAIRING = 0).
            device.putKey(StorageKey.rebootMode, [0, 0, 0, 0])
            effects.note("partial flashing: FF 00, restarting in pairing mode")
            effects.requestReboot()
        default:
            finishJob(effects: &effects)
        }
    }

    /// The flash work after the key-value store: `flashPointer = offset` (read now, once: a
    /// block that came in since the event was raised has changed it), then the page erase when
    /// `flashPointer` opens a page (CODAL: unless the page is blank; DAL: always), then the burn.
    private mutating func eraseThenBurn(device: inout DeviceState, effects: inout ServiceEffects) {
        flashPointer = offset
        guard !refusesProtectedFlash(device: &device, effects: &effects) else { return }
        let pageStart = flashPointer % device.layout.pageSize == 0
        guard pageStart && (runtime == .dal || !device.flash.isBlank(pageAt: flashPointer)) else {
            return burn(device: &device, effects: &effects)
        }
        guard !operationFails("erase", device: &device, effects: &effects) else { return }
        // A reset before the erase finishes leaves the page torn (see `FlashMemory.beginErase`).
        device.flash.beginErase(pageAt: flashPointer)
        effects.schedule(after: effects.pageEraseDuration(), tag: Step.eraseDone.rawValue)
    }

    /// The SoftDevice refuses to erase or write the MBR and its own pages (`sd_flash_write`,
    /// `sd_flash_page_erase` answer `NRF_ERROR_FORBIDDEN`: nRF5 SDK `s113/headers/nrf_soc.h`,
    /// S110 `nrf_soc.h`), and the runtime retries every 10 ms forever (CODAL
    /// `source/MicroBitFlash.cpp` `erase_page` and `flash_burn`; DAL
    /// `source/drivers/MicroBitFlash.cpp` `flash_burn`). So a block whose `offset` lies below the
    /// application area (a block sent before the last one was written, leaving only the low 16
    /// address bits, or END_OF_TRANSMISSION with no block since REGION_INFO) hangs the event
    /// work until a reset: nothing is written, no answer comes, later blocks, END_OF_TRANSMISSION
    /// and `FF 00` wait behind it, and the fibers starve (`DeviceState.fiberStarved`). The write
    /// handler keeps answering STATUS and REGION_INFO, and `FF 01` still resets
    /// (docs/protocols/partial-flashing.md §3.5). Returns true when it hangs. Checked where the
    /// firmware reads `offset` into `flashPointer`. Writes above the application area are not
    /// refused by the SoftDevice and are not modelled as refused.
    private mutating func refusesProtectedFlash(device: inout DeviceState, effects: inout ServiceEffects) -> Bool {
        guard flashPointer < device.layout.applicationStart else { return false }
        hang(
            "the SoftDevice refuses to write \(Hex.number(flashPointer, uppercase: false)) "
                + "(below the application area); the flash work retries forever until a reset",
            device: &device, effects: &effects)
        return true
    }

    /// True when the flash operation starting now never completes (`FaultPlan.flashOperationError`):
    /// the runtime spins on `flash_op_complete` for ever.
    private mutating func operationFails(
        _ what: String, device: inout DeviceState, effects: inout ServiceEffects
    ) -> Bool {
        guard effects.flashOperationFails() else { return false }
        hang(
            "the \(what) at \(Hex.number(flashPointer, uppercase: false)) ends with NRF_EVT_FLASH_OPERATION_ERROR; "
                + "the flash work waits for ever until a reset",
            device: &device, effects: &effects)
        return true
    }

    private mutating func hang(_ why: String, device: inout DeviceState, effects: inout ServiceEffects) {
        hangs = true
        device.fiberStarved = true
        effects.note("partial flashing: \(why)")
    }

    /// Burns the block buffer, as it is now, at `flashPointer`; `01 FF` follows when the burn is done.
    private mutating func burn(device: inout DeviceState, effects: inout ServiceEffects) {
        guard !refusesProtectedFlash(device: &device, effects: &effects) else { return }
        guard !operationFails("burn", device: &device, effects: &effects) else { return }
        do {
            try device.flash.writeWords(block, at: flashPointer)
            effects.note("partial flashing: wrote 64 bytes at \(Hex.number(flashPointer, uppercase: false))")
            effects.schedule(after: effects.timing.blockWrite, tag: Step.burnDone.rawValue)
        } catch {
            hardFault("\(error)", effects: &effects)
        }
    }

    private mutating func finishJob(effects: inout ServiceEffects) {
        if !jobs.isEmpty { jobs.removeFirst() }
        busy = false
        startNextJob(effects: &effects)
    }

    private mutating func hardFault(_ why: String, effects: inout ServiceEffects) {
        effects.note("partial flashing: hard fault (\(why)), the board resets")
        effects.requestReboot()
    }
}
