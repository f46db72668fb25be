import Diagnostics
import McuMgr
import Transport

extension FlowWords {
    public static func text(of r: McuMgrReport) -> String {
        switch r {
        case let .requestRetried(command, cause, attempt): return "\(command): \(text(of: cause)), attempt \(attempt)"
        case let .requestResent(command): return "\(command) again on the new connection"
        case let .uploadRetried(offset, cause): return "image upload at offset \(offset): \(text(of: cause))"
        case let .offsetMismatch(offset): return "device expects offset \(offset); resending from there"
        case .uploadMismatch: return "the device's copy does not match the file; uploading again"
        case .resetAgain: return "the device still holds the image in slot 1: it did not reset; resetting again"
        case let .silentLink(n, false): return "no answer \(n) times in a row; reconnecting"
        case let .silentLink(n, true): return "the device took no new bytes through \(n) timeouts; reconnecting"
        case let .linkLost(reason): return "link lost (\(reason)); reconnecting"
        case let .connectAttemptFailed(attempt, error):
            return "connection attempt \(attempt) failed (\(error)); trying again"
        case let .parametersUnavailable(problem):
            let why = problem == .notReported ? "the device does not report them" : "no answer"
            return "McuMgr parameters unavailable (\(why)): one frame per write, no pipelining"
        case let .deviceBuffers(count, size, frameLimit, inFlight):
            return "device buffers: \(count) × \(size) bytes; frames up to \(frameLimit) bytes, \(inFlight) in flight"
        case .alreadyRunning: return "the device already runs this image"
        case .alreadyRunningAfterTest: return "the device already runs the image (it reset after the test was set)"
        case .alreadyHeld: return "the device already holds this image; skipping the upload"
        case .clearingSecondarySlot: return "the secondary slot holds another image; clearing it first"
        case let .resetting(wait): return "the device is resetting; reconnecting in \(wait.readableText)"
        case let .resumingUpload(offset): return "resuming the upload at offset \(offset)"
        case let .framesFitOneWrite(sign, writeSize):
            return
                "\(text(of: sign)): the link loses writes, so each upload frame now fits one write of \(writeSize) bytes"
        case let .writesShortened(timeouts, writeSize):
            return "the upload went unanswered \(timeouts) times in a row: the link may be dropping long writes, "
                + "so writes now carry at most \(writeSize) bytes, one frame at a time"
        case .readingBack: return "reading the board's slots back after the failure"
        case .ignoredLateNotification: return "ignored a notification that arrived after the link dropped"
        case let .writeFailed(error): return "write failed: \(error)"
        case let .unreadableNotification(error): return "dropped an unreadable notification: \(error)"
        case .linkKeptAfterReset: return "the device did not drop the link after reset; disconnecting"
        case let .frame(sent, header, bytes, shown):
            let shownBytes = Hex.bytes(bytes.prefix(shown), separator: " ")
            let hex = bytes.count > shown ? shownBytes + " … (\(bytes.count) bytes)" : shownBytes
            return "\(sent ? "→" : "←") \(header) " + hex
        case let .stateReadFrame(sent, bytes, shown):
            let hex = Hex.bytes(bytes.prefix(shown), separator: " ")
            return "SMP \(sent ? "→" : "←") \(hex)\(bytes.count > shown ? " …" : "") (\(bytes.count) bytes)"
        }
    }

    static func text(of cause: McuMgrRetryCause) -> String {
        switch cause {
        case .busy: return "device busy"
        case .noAnswer: return "no answer"
        case let .noAnswerWithin(timeout): return "no answer within \(timeout)"
        }
    }

    static func text(of sign: McuMgrWriteLossSign) -> String {
        switch sign {
        case .uploadUnanswered: return "the upload went unanswered"
        case .chunkUnanswered: return "an upload chunk went unanswered"
        case let .deviceExpects(offset): return "the device expects offset \(offset)"
        }
    }
}
