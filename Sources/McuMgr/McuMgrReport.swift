import SMP
import Transport

/// What an McuMgr upgrade (and the image state read) tells the user, as values: the command, the
/// offset, the attempt and why, without the words. `FlowWords` in the Flashing module words them;
/// tests assert the values.
public enum McuMgrReport: FlowReportValue {
    // Retries

    /// The pending request goes again, its `attempt`th time (retry).
    case requestRetried(command: String, cause: McuMgrRetryCause, attempt: Int)
    /// The pending request goes again on the new connection (retry).
    case requestResent(command: String)
    /// The upload goes on again from the device's `offset` (retry).
    case uploadRetried(offset: Int, cause: McuMgrRetryCause)
    /// The device expects `offset`: sending again from there (retry).
    case offsetMismatch(expected: Int)
    /// The device's copy does not match the file: uploading again (retry).
    case uploadMismatch
    /// The image still waits in slot 1 after the reconnect: resetting again (retry).
    case resetAgain
    /// `timeouts` timeouts in a row: closing the link and reconnecting; `tookNoBytes`: the
    /// device answered but took no new bytes (retry).
    case silentLink(timeouts: Int, tookNoBytes: Bool)
    /// The link dropped: reconnecting (retry).
    case linkLost(DisconnectReason)
    /// Connection attempt `attempt` failed: trying again (retry).
    case connectAttemptFailed(attempt: Int, error: TransportError)

    // Notes

    /// The McuMgr parameters are unknown: one frame per write, no pipelining (note).
    case parametersUnavailable(McuMgrParametersProblem)
    /// The device's buffers, and the frames and pipeline depth chosen from them (note).
    case deviceBuffers(count: Int, size: Int, frameLimit: Int, inFlight: Int)
    /// The device already runs the image: nothing to do (note).
    case alreadyRunning
    /// The device already runs the image: it reset after the test was set (note).
    case alreadyRunningAfterTest
    /// The device already holds the image: the upload is skipped (note).
    case alreadyHeld
    /// Another image waits in the secondary slot: clearing it first (note).
    case clearingSecondarySlot
    /// The device resets: reconnecting after `reconnectIn` (note).
    case resetting(reconnectIn: Duration)
    /// A new connection: the upload goes on at `offset` (note).
    case resumingUpload(offset: Int)
    /// Upload frames now fit one write of `writeSize` bytes, because `cause` (note).
    case framesFitOneWrite(cause: McuMgrWriteLossSign, writeSize: Int)
    /// The upload went unanswered `timeouts` times: writes now carry at most `writeSize` bytes,
    /// one frame at a time (note).
    case writesShortened(timeouts: Int, writeSize: Int)
    /// The upgrade failed: reading the board's slots back (note).
    case readingBack

    // Traces

    /// A notification arrived after the link dropped and was ignored (trace).
    case ignoredLateNotification
    /// A write could not be handed to the link (trace).
    case writeFailed(TransportError)
    /// A notification could not be read as SMP and was dropped (trace).
    case unreadableNotification(SMPError)
    /// The device answered the reset but kept the link: closing it (trace).
    case linkKeptAfterReset
    /// An SMP frame sent (`sent`) or received, with its header; `shownBytes` of it shown (trace).
    case frame(sent: Bool, header: SMPHeader, bytes: [UInt8], shownBytes: Int)
    /// The image state read's request or answer (`ImageStateReader`); `shownBytes` shown (trace).
    case stateReadFrame(sent: Bool, bytes: [UInt8], shownBytes: Int)

    public var kind: FlowReportKind {
        switch self {
        case .requestRetried, .requestResent, .uploadRetried, .offsetMismatch, .uploadMismatch, .resetAgain,
            .silentLink,
            .linkLost, .connectAttemptFailed:
            return .retry
        case .parametersUnavailable, .deviceBuffers, .alreadyRunning, .alreadyRunningAfterTest, .alreadyHeld,
            .clearingSecondarySlot, .resetting, .resumingUpload, .framesFitOneWrite, .writesShortened, .readingBack:
            return .note
        case .ignoredLateNotification, .writeFailed, .unreadableNotification, .linkKeptAfterReset, .frame,
            .stateReadFrame:
            return .trace
        }
    }
}

/// Why a request or the upload goes again.
public enum McuMgrRetryCause: Sendable, Equatable {
    /// The device answered "busy" (MGMT_ERR_EBUSY).
    case busy
    /// No answer came in time.
    case noAnswer
    /// No answer came within the request timeout.
    case noAnswerWithin(Duration)
}

/// Why the McuMgr parameters (the device's buffers) are unknown.
public enum McuMgrParametersProblem: Sendable, Equatable {
    /// The device does not implement the parameters command.
    case notReported
    /// The device did not answer it.
    case noAnswer
}

/// What showed that the link loses writes.
public enum McuMgrWriteLossSign: Sendable, Equatable {
    /// The upload went unanswered until the link was closed.
    case uploadUnanswered
    /// An upload chunk went unanswered.
    case chunkUnanswered
    /// The device expects an earlier offset: a chunk before it was lost.
    case deviceExpects(offset: Int)
}
