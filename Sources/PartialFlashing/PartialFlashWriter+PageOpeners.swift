import FirmwareImage
import PartialFlashingFrames
import Transport

/// Answers to a block that opens a flash page.
///
/// The board erases a page when the block at its start arrives, in its event handler, while its
/// Bluetooth handler keeps taking packets into the one block buffer (partial-flashing-protocol.md
/// §3.1, §3.4). Answers carry no block id, so a duplicated and delayed `01 FF` of the block
/// before could pass for the page opener's own; the next block would then arrive during the
/// erase, overwrite the buffer, and the page opener would never be written, with one answer per
/// transmission all the same (nothing to count). A page opener's own answer cannot come before
/// the erase ends, and the next block must not arrive before it does: so every answer to a page
/// opener that arrives within `pageOpenerHold` of sending it is held until that time, the
/// latest one standing for the block (earlier ones were late copies), and the next block goes
/// out only then. Answers after the hold are taken at once.
///
/// A board that skips erasing a blank page (CODAL) answers sooner; its answer waits for the
/// hold, which costs one erase time on such pages and nothing else.
extension PartialFlashWriter {
    /// The block in flight opens a page and its answers are being held.
    var holdingAnswers: Bool {
        guard let holdUntil, state == .awaitingAck else { return false }
        return clock < holdUntil
    }

    /// Starts holding the answers to the block just sent, when it opens a page.
    mutating func startHold(for block: BlockPlan.Block) -> [FlowAction] {
        let cancel = endHold()
        guard pageOpenerHold > .zero, block.opensPage else { return cancel }
        holdUntil = clock + pageOpenerHold
        return cancel
    }

    /// Keeps `answer` until the hold ends; a later answer replaces it.
    mutating func hold(_ answer: PartialFlashingNotification, trace: FlowAction) -> [FlowAction] {
        guard let holdUntil else { return [trace] }
        var actions = [trace]
        if heldAnswer != nil {
            heldCopies += 1
            actions.append(.report(.trace("two answers to one page-opening block: the earlier was a late copy")))
        } else {
            actions.append(.report(.trace("held until the page erase can have finished (\((holdUntil - clock).shortText))")))
            actions.append(.startTimer(PartialFlashTimer.pageOpenerHold, holdUntil - clock))
        }
        heldAnswer = answer
        return actions
    }

    /// The hold is over: the latest answer held stands for the block.
    mutating func holdEnded() -> [FlowAction] {
        guard state == .awaitingAck, let answer = heldAnswer else { return [] }
        heldAnswer = nil
        holdUntil = nil
        switch answer {
        case .writeSuccess: return acknowledged()
        case .writeFail: return outOfOrder()
        default: return []
        }
    }

    /// An answer after the hold while an earlier one is held: the held one was a late copy.
    mutating func afterHold() -> [FlowAction] {
        if heldAnswer != nil { heldCopies += 1 }
        return endHold()
    }

    /// Stops holding (a new transmission, a resynchronisation, a lost link); drops what was held.
    mutating func endHold() -> [FlowAction] {
        let armed = heldAnswer != nil
        heldAnswer = nil
        holdUntil = nil
        return armed ? [.cancelTimer(PartialFlashTimer.pageOpenerHold)] : []
    }
}

extension ChipFamily {
    /// How long the board's flash takes to erase one page, from the chips' datasheets
    /// (nRF52833 tERASEPAGE 85 ms, nRF51 22.3 ms; partial-flashing-protocol.md §8).
    var pageEraseTime: Duration {
        switch self {
        case .nrf52833: return .milliseconds(85)
        case .nrf51: return .microseconds(22_300)
        }
    }

    /// Holding a page opener's answers: the block's packets reach the board within one
    /// connection interval, then the erase and the block's 16-word write (1 ms at most).
    func pageOpenerHold(connectionInterval: Duration?) -> Duration {
        pageEraseTime + .milliseconds(1) + (connectionInterval ?? .milliseconds(30))
    }
}
