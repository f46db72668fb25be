import NordicDFU
import NordicDFUFrames

extension FlowWords {
    public static func text(of r: NordicDFUReport) -> String {
        switch r {
        case .enteringBootloader(.secure): return "entering the Nordic secure bootloader (buttonless DFU)"
        case .enteringBootloader(.legacy): return "entering the Nordic legacy bootloader (micro:bit DFU control)"
        case .recoveringFromBootloader:
            return "the board is in its bootloader (\"DfuTarg\"): recovering it with a full update"
        case let .reconnecting(error): return "reconnecting: \(error)"
        case let .linkLost(step, reason, restarts):
            let plan = restarts ? "starting the transfer again" : "reconnecting to the bootloader"
            return "link lost during \(step.name) (\(reason)): \(plan)"
        case let .initPacketAccepted(bytes): return "init packet accepted: \(bytes) bytes follow"
        case .initPacketStored: return "init packet already stored: executing it"
        case .initPacketMismatch: return "init packet checksum mismatch: sending it again"
        case let .noPacketReceipt(sent): return "no packet receipt at \(sent) bytes: asking for the checksum"
        case let .packetReceiptBehind(offset, sent): return "packet receipt at \(offset) bytes, \(sent) sent: checking"
        case let .objectResent(start, at):
            return "checksum mismatch at \(at) bytes: sending the object at \(start) again"
        case let .noAnswer(step): return "no answer to \(step.name): asking where the bootloader is"
        case let .executingLastObject(offset): return "bootloader holds \(offset) bytes: executing the last object"
        case let .resuming(offset): return "resuming at \(offset) bytes"
        case let .closedDuringFinalValidation(reason):
            return "the link closed during the final validation (\(reason)): reconnecting to see what runs"
        case .bootloaderAfterFinalValidation: return "the board came back in its bootloader after the final validation"
        case let .transferRestarted(cause):
            return "\(text(of: cause)): resetting the bootloader and starting the transfer again"
        case .checkingApplication: return "checking that the board left its bootloader"
        }
    }

    static func text(of cause: LegacyRestartCause) -> String {
        switch cause {
        case .unfinishedTransfer: return "the bootloader holds an unfinished transfer"
        case let .packetReceiptMismatch(offset, sent): return "packet receipt at \(offset) bytes, \(sent) sent"
        case let .noPacketReceipt(sent): return "no packet receipt at \(sent) bytes"
        case let .bootloaderError(bytes): return "the bootloader reported \(bytes.hexText)"
        case .validatedImageLost: return "the bootloader no longer holds the validated image"
        case .validatedImageNotStarted: return "the bootloader did not start the validated image"
        case let .noAnswer(step): return "no answer to \(step.name)"
        }
    }
}
