import Transport

/// The timeouts and limits of the partial-flashing flows.
///
/// Every wait is a timer action and every loop is bounded, so a run always ends:
/// with a result, or with a `PartialFlashError` that says what was exhausted.
/// The defaults suit a BlueZ central (30-50 ms connection interval) talking to
/// CODAL or DAL firmware: an acknowledgement normally arrives within two
/// connection events plus a page erase (at most about 200 ms).
public struct PartialFlashSettings: Sendable, Equatable {
    /// How long to wait for the answer to STATUS or REGION_INFO. Default 2 s.
    public var answerTimeout: Duration
    /// How many times STATUS or REGION_INFO is sent before giving up. Default 3.
    public var requestAttempts: Int
    /// Reboot a board that runs its application into pairing mode (`FF 00`) before
    /// reading its regions. Default true.
    public var switchToPairingMode: Bool
    /// How many `FF 00` switches one run may make. Default 2.
    public var modeSwitchLimit: Int
    /// How long to wait for the board to drop the link after `FF 00` or END_OF_TRANSMISSION. Default 10 s.
    public var rebootTimeout: Duration
    /// The pause before connecting again after the link dropped. Default 1 s.
    public var reconnectDelay: Duration
    /// The pause before connecting again to a board that restarts as asked (`FF 00`,
    /// END_OF_TRANSMISSION). Default 0: the connection attempt itself waits until the board
    /// advertises again (BlueZ, and the link model, do), so any pause here is time lost; the
    /// board is back about 0.3 s after the reset, well before a 1 s pause would end.
    public var rebootReconnectDelay: Duration = .zero
    /// Connection attempts after one link loss before giving up. Default 3.
    public var reconnectAttempts: Int
    /// Unexpected link losses one run tolerates (reboots the flow asked for do not count). Default 3.
    public var reconnectLimit: Int
    /// How long to wait for the acknowledgement of one 64-byte block. Default 1 s.
    public var blockTimeout: Duration
    /// Retries of one block (resends, resynchronisations, reconnections) before giving up. Default 5.
    public var blockRetryLimit: Int
    /// Retries of the whole run before giving up. Default 50.
    public var runRetryLimit: Int
    /// Fixed part of the run deadline (writing, reboot and verification). Default 30 s.
    public var deadlineBase: Duration
    /// Added to the run deadline for every planned block. Default 250 ms.
    public var deadlinePerBlock: Duration
    /// Leave out all-0xFF blocks inside opened pages (never a page's first block). Default true.
    public var skipErasedBlocks: Bool
    /// After the reboot, reconnect and check that REGION_INFO 2 reports the new program. Default true.
    public var verifyAfterFlash: Bool
    /// Ignore a `01 FF` / `01 AA` that reaches the writer at the very instant (`now`) its block was
    /// sent: it cannot be that block's answer, so it is a duplicate of the previous one. Turn it on
    /// with drivers whose clock advances between a write and its answer (real links, the link
    /// model); leave it off with zero-latency drivers, where every answer arrives at the send instant.
    /// Default false.
    public var rejectSimultaneousAnswers: Bool
    /// With `rejectSimultaneousAnswers`: an answer that arrives no later than this after its block
    /// was sent is also ignored. A real answer needs the block's writes to go on air and the
    /// board's flash work to finish, so it comes in a later connection event (BLE's shortest
    /// interval is 7.5 ms); an earlier one is a late answer to the previous block. Taking it for
    /// this block's answer would start the next block while the board still assembles this one
    /// in its single buffer, and the board would then burn a block at a wrong address
    /// (partial-flashing-protocol.md §3.1, §3.3). Default zero (only the very same instant).
    public var minimumAnswerDelay: Duration
    /// Hold the answers to a block that opens a flash page until the board's page erase can have
    /// finished (its datasheet erase time plus one connection interval), so that a late copy of
    /// the previous block's answer cannot start the next block during the erase
    /// (`PartialFlashWriter+PageOpeners.swift`). Default false.
    public var holdPageOpenerAnswers: Bool
    /// Write the program hash last (`BlockPlan` with `sealProgramHash`), so that an interrupted
    /// flash never leaves the board reporting the new program's hash. Default false.
    public var sealProgramHash: Bool

    public init(answerTimeout: Duration = .seconds(2), requestAttempts: Int = 3,
                switchToPairingMode: Bool = true, modeSwitchLimit: Int = 2,
                rebootTimeout: Duration = .seconds(10), reconnectDelay: Duration = .seconds(1),
                reconnectAttempts: Int = 3, reconnectLimit: Int = 3,
                blockTimeout: Duration = .seconds(1), blockRetryLimit: Int = 5, runRetryLimit: Int = 50,
                deadlineBase: Duration = .seconds(30), deadlinePerBlock: Duration = .milliseconds(250),
                skipErasedBlocks: Bool = true, verifyAfterFlash: Bool = true,
                rejectSimultaneousAnswers: Bool = false, minimumAnswerDelay: Duration = .zero,
                holdPageOpenerAnswers: Bool = false, sealProgramHash: Bool = false) {
        self.answerTimeout = answerTimeout
        self.requestAttempts = max(1, requestAttempts)
        self.switchToPairingMode = switchToPairingMode
        self.modeSwitchLimit = max(0, modeSwitchLimit)
        self.rebootTimeout = rebootTimeout
        self.reconnectDelay = reconnectDelay
        self.reconnectAttempts = max(1, reconnectAttempts)
        self.reconnectLimit = max(0, reconnectLimit)
        self.blockTimeout = blockTimeout
        self.blockRetryLimit = max(0, blockRetryLimit)
        self.runRetryLimit = max(0, runRetryLimit)
        self.deadlineBase = deadlineBase
        self.deadlinePerBlock = deadlinePerBlock
        self.skipErasedBlocks = skipErasedBlocks
        self.verifyAfterFlash = verifyAfterFlash
        self.rejectSimultaneousAnswers = rejectSimultaneousAnswers
        self.minimumAnswerDelay = max(.zero, minimumAnswerDelay)
        self.holdPageOpenerAnswers = holdPageOpenerAnswers
        self.sealProgramHash = sealProgramHash
    }

    /// The settings for drivers whose answers take link time (BlueZ, the link model): answers
    /// sooner than 5 ms after their block are late answers to the previous block and ignored
    /// (1.5 connection intervals when the transport reports the interval), the answers to a
    /// page-opening block are held until its erase can have finished, and the program hash is
    /// written last.
    public static var overALink: PartialFlashSettings {
        PartialFlashSettings(rejectSimultaneousAnswers: true, minimumAnswerDelay: .milliseconds(5),
                             holdPageOpenerAnswers: true, sealProgramHash: true)
    }

    /// The deadline of a run that writes `blocks` blocks.
    public func deadline(blocks: Int) -> Duration { deadlineBase + deadlinePerBlock * blocks }
}

/// The timers the partial-flashing flows start.
public enum PartialFlashTimer {
    /// The answer to STATUS or REGION_INFO.
    public static let answer = TimerID("partial-flash.answer")
    /// The acknowledgement of the block in flight.
    public static let block = TimerID("partial-flash.block")
    /// The disconnect that follows `FF 00` or END_OF_TRANSMISSION.
    public static let reboot = TimerID("partial-flash.reboot")
    /// The deadline of the whole write.
    public static let deadline = TimerID("partial-flash.deadline")
    /// The end of the hold on a page-opening block's answers.
    public static let pageOpenerHold = TimerID("partial-flash.page-opener-hold")
}

extension Duration {
    /// "1 s", "250 ms": short, for messages.
    var shortText: String {
        let (s, atto) = components
        let ms = s * 1000 + atto / 1_000_000_000_000_000
        if ms % 1000 == 0 { return "\(ms / 1000) s" }
        return "\(ms) ms"
    }
}

extension Array where Element == UInt8 {
    /// Spaced upper-case hex for traces: `01 47 00 00`.
    var spacedHex: String {
        map { b in
            let s = String(b, radix: 16, uppercase: true)
            return b < 16 ? "0" + s : s
        }.joined(separator: " ")
    }
}

/// `0x00047000`: addresses in messages.
func hex32(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 8 - s.count)) + s
}
