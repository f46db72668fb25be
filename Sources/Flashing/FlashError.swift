import Diagnostics
import McuMgr
import Transport

/// The errors of a flashing session: each says what went wrong and what to do.
public enum FlashError: Error, Sendable, CustomStringConvertible {
    /// Only partial flashing was allowed (mode partial), and it cannot be used.
    case partialImpossible(String)
    /// A full update is needed, but the file gives nothing to upload. `names` says how to give an image.
    case noFullImage(reason: FlashReason, names: OptionNames = .neutral)
    /// A full update is needed, but the board offers no full-update service.
    case noFullPath(reason: FlashReason)
    /// The board could not be reached again for the full update.
    case fullUpdateUnreachable(TransportError)
    case fullUpdateFailed(reason: FlashReason, error: any Error)
    /// The full-update path asked for is not one the board offers.
    case fullPathUnavailable(FullUpdatePath, reason: FlashReason, names: OptionNames = .neutral)
    /// The Nordic DFU failed (the error says why and what to do).
    case nordicDFUFailed(reason: FlashReason, error: any Error)
    /// The file has no image for this board.
    case noImageForBoard(String)
    /// The full update completed, but reading the board back afterwards failed (the board runs
    /// something else, or it stays in pairing mode).
    case notFinishedAfterFullUpdate(reason: FlashReason, error: any Error)
    /// Partial flashing gave up after a block whose answer never came; the board was reset with
    /// `FF 01` before the full update, and did not come back.
    case notBackAfterReset(reason: FlashReason, error: any Error)

    public var description: String {
        switch self {
        case let .partialImpossible(why):
            return "partial flashing is not possible: \(why)"
        case let .noFullImage(reason, names):
            return
                "\(reason.message); but the file has no application image to upload: give one with \(names.fullImage)"
        case let .noFullPath(reason):
            return
                "\(reason.message); but the board offers no full-update service (neither McuMgr/SMP nor Nordic DFU): "
                + "flash it once over USB, or put it in its bootloader and try again"
        case let .fullUpdateUnreachable(error):
            return
                "could not reconnect for the full update (\(error)): bring the board closer, reset it, and run bitflash again"
        case let .fullUpdateFailed(reason, error):
            // The McuMgr failure says what to do and what the board holds, read back; nothing
            // here claims more than that. Only a transient failure may go better on the same command.
            var text = "the full update (\(reason.code)) failed: \(describe(error))"
            if !(error is McuMgrFailure) {
                text += ". What the board holds now was not read back"
                if Transience.of(error) { text += "; run the same command again" }
            }
            if reason.code == "partial-failed", let block = reason.details?.block {
                text +=
                    ". Partial flashing had stopped at block \(block) of the program region before this update, "
                    + "so that region may have changed since the image in slot 0 was installed"
            }
            return text
        case let .fullPathUnavailable(path, reason, names):
            let what =
                path == .nordic
                ? "no Nordic DFU (neither the buttonless service FE59 nor the micro:bit DFU control service)"
                : "no McuMgr (SMP) service"
            return "\(reason.message); \(names.fullPath(path)) was asked for, but the board offers \(what): "
                + "leave out \(names.fullPathOption) to use the path the board has"
        case let .nordicDFUFailed(reason, error):
            return "the full update by Nordic DFU (\(reason.code)) failed: \(describe(error))"
        case let .noImageForBoard(message):
            return message
        case let .notFinishedAfterFullUpdate(reason, error):
            return
                "the full update (\(reason.code)) wrote the new program, but the board was not left running it: \(describe(error))"
        case let .notBackAfterReset(reason, error):
            return
                "\(reason.message); before a full update the board was reset (FF 01), as its flash work may hang, "
                + "but \(describe(error)): no full update was started. Power-cycle the board (unplug it, or press "
                + "its reset button) and run the same command again"
        }
    }
}

extension FlashError: DomainError {
    /// 65 when the file cannot give what the board needs (the same as `bitflash plan` says); a
    /// full update that failed exits as its error does (65: the image cannot be for this board;
    /// 76: the Bluetooth stack broke its protocol); 74 otherwise.
    public var failureKind: FailureKind {
        switch self {
        case .noFullImage, .noImageForBoard: return .badFirmware
        case let .fullUpdateFailed(_, error): return FailureKind.of(error)
        default: return .flashFailed
        }
    }
}
