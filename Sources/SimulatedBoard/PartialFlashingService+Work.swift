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
                markedIncomplete = true
                if device.storage[StorageKey.flashIncomplete] == nil { device.storage[StorageKey.flashIncomplete] = [0x01] }
            }
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
            // source-header scrub never matches (docs/protocols/partial-flashing.md §3.5). Neither changes
            // what is simulated.
            device.storage.removeValue(forKey: StorageKey.flashIncomplete)
            effects.note("partial flashing: end of transmission, rebooting")
            effects.requestReboot()
        case (.restartInPairingMode, .begin):
            if device.storage[StorageKey.rebootMode] == nil { device.storage[StorageKey.rebootMode] = [0x01] }
            effects.note("partial flashing: FF 00, restarting in pairing mode")
            effects.requestReboot()
        default:
            finishJob(effects: &effects)
        }
    }

    /// Burns the block buffer at `offset` as they are now.
    private mutating func burn(device: inout DeviceState, effects: inout ServiceEffects) {
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
