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
        guard busy, let job = jobs.first, let step = Step(rawValue: tag) else { return }
        switch (job, step) {
        case (.flashData, .begin):
            if !markedIncomplete {
                // The first block of a boot: `put("flashIncomplete")` (a `put` of the same value
                // writes nothing; a full CODAL store refuses it silently).
                markedIncomplete = true
                device.putKey(StorageKey.flashIncomplete, [0x01])
            }
            guard refusesProtectedFlash(device: device, effects: &effects) else { return }
            let pageStart = offset % device.layout.pageSize == 0
            if pageStart && (runtime == .dal || !device.flash.isBlank(pageAt: offset)) {
                pendingErase = offset
                // A reset before the erase finishes leaves the page torn (see `FlashMemory.beginErase`).
                device.flash.beginErase(pageAt: offset)
                effects.schedule(after: effects.pageEraseDuration(), tag: Step.eraseDone.rawValue)
            } else {
                burn(device: &device, effects: &effects)
            }
        case (.flashData, .eraseDone):
            do {
                try device.flash.erasePage(at: pendingErase)
                effects.note("partial flashing: erased page \(Hex.number(pendingErase, uppercase: false))")
                burn(device: &device, effects: &effects)
            } catch {
                hardFault("\(error)", effects: &effects)
            }
        case (.flashData, .burnDone):
            effects.notify(KnownGATT.partialFlashing, PartialFlashingNotification.writeSuccess.bytes)
            finishJob(effects: &effects)
        case (.endOfTransmission, .begin):
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

    /// The SoftDevice refuses to erase or write the MBR and its own pages (`sd_flash_write`,
    /// `sd_flash_page_erase` answer `NRF_ERROR_FORBIDDEN`: nRF5 SDK `s113/headers/nrf_soc.h`,
    /// S110 `nrf_soc.h`), and the runtime retries every 10 ms forever (CODAL
    /// `source/MicroBitFlash.cpp` `erase_page` and `flash_burn`; DAL
    /// `source/drivers/MicroBitFlash.cpp` `flash_burn`). So a block whose `offset` lies below the
    /// application area (a block sent before the last one was written, leaving only the low 16
    /// address bits, or END_OF_TRANSMISSION with no block since REGION_INFO) hangs the event
    /// work until a reset: nothing is written, no answer comes, later blocks, END_OF_TRANSMISSION
    /// and `FF 00` wait behind it. The write handler keeps answering STATUS and REGION_INFO, and
    /// `FF 01` still resets (docs/protocols/partial-flashing.md §3.5). Returns false when it hangs.
    /// Checked where the firmware reads `offset`: before a page erase and before each burn.
    /// Writes above the application area are not refused by the SoftDevice and are not modelled
    /// as refused.
    private mutating func refusesProtectedFlash(device: DeviceState, effects: inout ServiceEffects) -> Bool {
        guard offset < device.layout.applicationStart else { return true }
        hangs = true
        effects.note(
            "partial flashing: the SoftDevice refuses to write \(Hex.number(offset, uppercase: false)) "
                + "(below the application area); the flash work retries forever until a reset")
        return false
    }

    /// Burns the block buffer at `offset` as they are now.
    private mutating func burn(device: inout DeviceState, effects: inout ServiceEffects) {
        // `offset` as it is now: a block that came in meanwhile may have changed it.
        guard refusesProtectedFlash(device: device, effects: &effects) else { return }
        do {
            try device.flash.writeWords(block, at: offset)
            effects.note("partial flashing: wrote 64 bytes at \(Hex.number(offset, uppercase: false))")
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
