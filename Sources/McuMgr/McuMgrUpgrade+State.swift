import SMP
import Transport

/// The states of the McuMgr upgrade and the data each holds; what spans states is the run's
/// (`Budget`, `BoardRecord`, the link's own state, the SMP channel and the upload session).
extension McuMgrUpgrade {
    /// Where the upgrade stands, with the data that means something there.
    enum State: Sendable {
        case idle
        /// A single request serves `Step`: it is outstanding, or waits out a busy answer.
        case requesting(Step, Pending)
        /// The image is being uploaded (its chunks in flight are the run's `UploadSession`).
        case uploading
        /// The device is being reset into the image.
        case resetting(Reset)
        /// The upgrade failed; the board's slots are being read back for the error.
        case readingBack(ReadBack)
        case finished
    }

    /// The steps made of one request.
    enum Step: Equatable, Sendable {
        /// The device's buffer parameters.
        case params
        /// The image state read before the upload.
        case validate
        /// The confirm that clears another image from the secondary slot.
        case recoverConfirm
        case test, confirm
        /// The image state read after the swap.
        case verify
    }

    /// A request other than upload, waiting for its answer.
    struct Pending: Sendable {
        var command: Command
        var sequence: UInt8
        var attempts: Int
    }

    struct Reset: Sendable {
        /// The step once the device is back (validate again, confirm, or verify).
        let then: Step
        var phase: Phase

        enum Phase: Sendable {
            /// The reset request is outstanding.
            case requested(Pending)
            /// The device answered at this time; it drops the link when it resets.
            case answered(at: Duration)
            /// The link dropped: the device resets and MCUboot swaps the slots.
            case restarting
        }
    }

    struct ReadBack: Sendable {
        /// The error being reported.
        let cause: McuMgrError
        /// The image state read.
        var pending: Pending
    }

    /// The link, beside the state: the upgrade goes on where it stood once a lost link is back.
    enum LinkState: Equatable, Sendable {
        /// Not connected (before the start, or after a loss that ended the upgrade).
        case down
        case up
        /// The link is down and a `connect` is outstanding, after `failures` failed attempts.
        case reconnecting(failures: Int)
    }

    /// What the run counts across states, against the options' budgets.
    struct Budget: Sendable {
        /// When the upgrade started, for `McuMgrUpgradeOptions.maximumDuration`.
        var startedAt: Duration?
        var disconnects = 0
        /// Unexpected disconnects since the upload last advanced or a request was last answered.
        var disconnectsWithoutProgress = 0
        /// Clearings of the secondary slot.
        var recoveries = 0
        /// Request timeouts since the last answer.
        var consecutiveTimeouts = 0
        /// Upload timeouts since the last answer during the upload (reconnections do not reset it).
        var silentUploadTimeouts = 0
        var uploadRestarts = 0
        /// Resets sent again because the device had not reset (the reset request was lost).
        var resetRepeats = 0
    }

    /// What the run knows of the board's slots.
    struct BoardRecord: Sendable {
        /// The last slot list the device reported (state read or state write answer).
        var lastSlots: [ImageSlotState]?
        /// Something that changes the board (an upload chunk, a test, a confirm, a reset) was
        /// sent: ever, and since `lastSlots` were read.
        var sentChanges = false
        var changedSinceLastRead = false
        /// True once the device swapped (a reset happened after test or confirm).
        var swapped = false

        mutating func changed() {
            sentChanges = true
            changedSinceLastRead = true
        }
    }
}

extension McuMgrUpgrade.State {
    /// The single request outstanding (or waiting out a busy answer).
    var pending: McuMgrUpgrade.Pending? {
        get {
            switch self {
            case let .requesting(_, pending): return pending
            case let .resetting(reset):
                if case let .requested(pending) = reset.phase { return pending }
                return nil
            case let .readingBack(readBack): return readBack.pending
            case .idle, .uploading, .finished: return nil
            }
        }
        set {
            guard let pending = newValue else { return }
            switch self {
            case let .requesting(step, _): self = .requesting(step, pending)
            case var .resetting(reset):
                reset.phase = .requested(pending)
                self = .resetting(reset)
            case var .readingBack(readBack):
                readBack.pending = pending
                self = .readingBack(readBack)
            case .idle, .uploading, .finished: break
            }
        }
    }

    /// The request step, in `requesting`.
    var step: McuMgrUpgrade.Step? {
        if case let .requesting(step, _) = self { return step }
        return nil
    }

    var isIdle: Bool { if case .idle = self { return true } else { return false } }
    var isUploading: Bool { if case .uploading = self { return true } else { return false } }
    var isResetting: Bool { if case .resetting = self { return true } else { return false } }
    var isReadingBack: Bool { if case .readingBack = self { return true } else { return false } }
    var isFinished: Bool { if case .finished = self { return true } else { return false } }
}

extension McuMgrUpgrade.LinkState {
    var isReconnecting: Bool { if case .reconnecting = self { return true } else { return false } }
}
