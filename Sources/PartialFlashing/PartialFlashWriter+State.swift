import Transport

/// The writer's states and the data each holds; what spans states is the run's `Progress` (and
/// the link's `LinkRecovery`).
///
/// Each state but `idle`, `reconnecting` and `finished` has exactly one timer running, the one
/// `State.timer` names: it is started when the state is entered (again) and cancelled when the
/// state is left before it fires.
extension PartialFlashWriter {
    /// Where the write stands, with the data that means something there.
    enum State: Sendable, Equatable {
        /// Not started: `.start` or `beginAfterRegionInfo(now:from:)` comes next.
        case idle
        /// REGION_INFO 2 (the barrier that resets the board's packet counters) sent `attempt`
        /// times, waiting for its answer; `Barrier` says what follows it.
        case syncing(attempt: Int, Barrier)
        /// The one out-of-order packet that steps the board's counters on is out; its `01 AA` is
        /// due (`step(_:)`).
        case stepping(Step)
        /// The block at `progress.index` is in flight, as `InFlight` says.
        case awaitingAck(InFlight)
        /// After a block whose answer did not come: `FF 00` sent `sends` times (twice at most),
        /// waiting for the board to restart once its pending flash events ran (the fence).
        case fencing(sends: Int, Fence)
        /// Connected again after a loss that followed `FF 00`: the restart probe and STATUS are
        /// out; `01 AA` shows the restart, STATUS's answer or `01 FF` first shows a board that
        /// did not restart (`checkRestart(_:lost:)`). `lost` is why the link dropped after
        /// `FF 00`: it counts as that drop when no restart shows.
        case checkingRestart(Fence, lost: DisconnectReason)
        /// Every block acknowledged: END_OF_TRANSMISSION sent, waiting for the reboot.
        case ending(End)
        /// Connecting again after a link loss; `Reconnection` says what the connection starts with
        /// (`LinkRecovery` counts the attempts).
        case reconnecting(Reconnection)
        case finished
    }

    /// What the barrier in progress is followed by.
    enum Barrier: Sendable, Equatable {
        /// The block at `progress.index`, numbered from 0: the first barrier of a run, and the
        /// planned one before the block that writes the program hash. Nothing is in doubt.
        case opening
        /// A step, then the block (`step(_:)`): the first barrier on a connection made again after
        /// an unexpected loss (the write goes on from a page opener already, `connected(_:)`).
        case afterReconnection
        /// A step, then the block: the first barrier after the fence's restart. `rewind`: the
        /// fence was for a block in doubt that may have been burnt, so the write may go on from
        /// its page's opener (`rewindIfRecovering(_:)`); false when the connection had rewound.
        case afterRestart(rewind: Bool)
        /// Another step: the step before timed out. `answerDue`: its `01 AA` has not come yet,
        /// so the next write answer before the barrier's is that one, late.
        case afterStep(answerDue: Bool)

        /// The block after this barrier goes out after a step (`step(_:)`), not numbered from 0.
        var stepsFirst: Bool { self != .opening }
    }

    /// A step (`step(_:)`): one out-of-order packet, to a board with nothing pending.
    struct Step: Sendable, Equatable {
        /// The packet number the board expects (0 or 252); it expects 4 more after the `01 AA`.
        let expected: UInt8
        /// `InFlight.outOfOrderSeen` of the block sent after the step.
        let outOfOrderSeen: Bool
    }

    /// The transmission in flight: the 4 packets of the block at `progress.index`.
    struct InFlight: Sendable, Equatable {
        /// The packet number of its first packet.
        let group: UInt8
        /// The block had one `01 AA` since the board's numbering was last reset: another goes
        /// through the fence, as after a timeout.
        let outOfOrderSeen: Bool
        /// How often the packets went again with the same numbers (`fillIn(_:)`).
        var fillIns = 0
        /// A write of these packets the driver could not hand to the link, since they last went.
        var writeFailure: TransportError?
    }

    /// A recovery through the fence, from `FF 00` to the barrier after the restart (see
    /// `PartialFlashWriter`).
    struct Fence: Sendable, Equatable {
        /// The first packet number of the block in doubt: the restart probe is numbered from it
        /// (`restartProbe(for:)`).
        let group: UInt8
        /// The transmission in doubt has not answered yet, so the next write answer is its one
        /// answer, late. False once it came: any other is one too many.
        var answerDue: Bool
        /// After the barrier the write goes on with the block in doubt or from the block that
        /// opens its page (`rewindIfRecovering(_:)`). False for the fence a reconnection starts
        /// with: that connection rewound already.
        let rewind: Bool
    }

    /// What a connection made after a link loss starts with.
    enum Reconnection: Sendable, Equatable {
        /// The loss was unexpected. `inFlight`: the first packet number of the block that was in
        /// flight when the link dropped (its flash event may still run and answer on the next
        /// connection, so that connection starts with the fence); nil when none was.
        case afterLoss(inFlight: UInt8?)
        /// The loss followed `FF 00` (or came during the restart check): the restart or a drop
        /// before it, `lost` the reason of that loss. The connection checks which.
        case afterFence(Fence, lost: DisconnectReason)
    }

    /// The end: END_OF_TRANSMISSION sent, the board should restart.
    struct End: Sendable, Equatable {
        /// How often END_OF_TRANSMISSION was sent (twice at most).
        var sends: Int
        /// `01 FF` / `01 AA` received since: evidence of a duplicated answer.
        var unaccountedAnswers = 0
    }

    /// What spans states: how far the write got, and what the block at `index` went through.
    struct Progress: Sendable, Equatable {
        /// The first block not yet acknowledged: the block in flight, in doubt, or sent next.
        var index: Int
        /// The most blocks acknowledged at once (the progress reported never goes backwards).
        var furthest: Int
        /// Retries counted against `blockRetryLimit` since a block was last acknowledged.
        var blockRetries = 0
        /// The problem last counted against a limit since a block was last acknowledged.
        var lastProblem: WriteProblem?
        /// Transmissions of the block at `index` that went unanswered in recoveries since it was
        /// last sent afresh (after an acknowledgement, a reconnection or a rewind): each may have
        /// been burnt (`rewindIfRecovering(_:)`).
        var burnsInDoubt: UInt8 = 0
        /// The block that writes the program hash was handed to the link, and no first block
        /// (whose page holds the hash) was acknowledged since: the board may report the new
        /// program already, so no page may be erased again before the hash's page is.
        var sealSent = false
        /// The resume block of the last checkpoint reported.
        var lastCheckpoint: Int?

        init(from block: Int) {
            index = block
            furthest = block
        }
    }
}

extension PartialFlashWriter.State {
    /// The timer running in this state.
    var timer: TimerID? {
        switch self {
        case .awaitingAck: return PartialFlashTimer.block
        case .syncing, .stepping, .checkingRestart: return PartialFlashTimer.answer
        case .fencing, .ending: return PartialFlashTimer.reboot
        case .idle, .reconnecting, .finished: return nil
        }
    }

    var isIdle: Bool { if case .idle = self { return true } else { return false } }
    var isReconnecting: Bool { if case .reconnecting = self { return true } else { return false } }
}
