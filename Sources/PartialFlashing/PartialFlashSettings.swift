import Transport

/// The timeouts and limits of the partial-flashing flows.
///
/// Every wait is a timer action and every loop is bounded, so a run always ends:
/// with a result, or with a `PartialFlashError` that says what was exhausted.
/// Timers only decide when the flows act (give up waiting, send again, resynchronise);
/// no setting says when an answer may arrive, and none depends on the link's timing.
/// The same defaults serve BlueZ, the simulator and the tests. An acknowledgement
/// normally arrives within two connection events plus a page erase (at most about
/// 200 ms on a BlueZ central's 30-50 ms interval).
public struct PartialFlashSettings: Sendable, Equatable {
    /// How long to wait for the answer to STATUS or REGION_INFO. Default 2 s.
    public var answerTimeout: Duration
    /// How many times STATUS or REGION_INFO is sent before giving up. Default 3.
    public var requestAttempts: Int
    /// Restart a board that runs its program into pairing mode (`FF 00`) before writing it
    /// partially (never before deciding, and never for any other path). Default true.
    public var switchToPairingMode: Bool
    /// How many `FF 00` switches one run may make. Default 2.
    public var modeSwitchLimit: Int
    /// How long a board that restarted as asked (END_OF_TRANSMISSION, `FF 01`, the end of a full
    /// update) is looked for before the result is reported as not read back. Default 10 s.
    ///
    /// A board that advertises after its restart does so within about 2 s: the reset (modelled
    /// 0.3 s), the runtime's boot decision (0.1 s, plus 0.5 s of LED fill when `flashIncomplete`
    /// sends it to pairing mode, 1.25 s on Calliope mini 1/2), then advertising every 50 ms in
    /// application mode or 200 ms in pairing mode (docs/protocols/board-storage.md §5,
    /// docs/protocols/partial-flashing.md §3.7); connecting and resolving its services take a
    /// few connection intervals more. A board not connected by then does not advertise: in
    /// application mode its program keeps Bluetooth off (MakeCode programs without the Bluetooth
    /// extension), or it is out of range. A pairing-mode board always advertises, so one that
    /// stays silent has no `flashIncomplete`. Connection attempts are made until the window ends,
    /// at most `reconnectAttempts`; the window cuts an attempt that is still waiting.
    public var restartWindow: Duration
    /// How many times one run rewrites a page and sends END_OF_TRANSMISSION again to clear
    /// `flashIncomplete` from a board that came back in pairing mode. Default 2.
    public var pageRewriteLimit: Int
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
    /// How long to wait for the answer to one 64-byte block before recovering (see
    /// `PartialFlashWriter`). Default 1 s.
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
    /// After a block timeout, how often the block's packets are sent again with the same numbers
    /// before the recovery through the fence (`FF 00`, the board's restart behind its pending
    /// flash events, a fresh connection: `PartialFlashWriter`). The
    /// board takes the packets it lacks and ignores the ones it has (CODAL and DAL
    /// `MicroBitPartialFlashingService::flashData` drop a packet 1 to 7 numbers behind the expected
    /// one), so a lost packet or block and a board still erasing end with the block's one answer
    /// and no restart. Default 2; 0 goes to the fence at once.
    public var fillIns = 2
    /// Write the program hash last (`BlockPlan` with `sealProgramHash`), so that an interrupted
    /// flash never leaves the board reporting the new program's hash. Default true.
    public var sealProgramHash: Bool

    public init(
        answerTimeout: Duration = .seconds(2), requestAttempts: Int = 3,
        switchToPairingMode: Bool = true, modeSwitchLimit: Int = 2,
        rebootTimeout: Duration = .seconds(10), reconnectDelay: Duration = .seconds(1),
        reconnectAttempts: Int = 3, reconnectLimit: Int = 3,
        blockTimeout: Duration = .seconds(1), blockRetryLimit: Int = 5, runRetryLimit: Int = 50,
        deadlineBase: Duration = .seconds(30), deadlinePerBlock: Duration = .milliseconds(250),
        skipErasedBlocks: Bool = true, verifyAfterFlash: Bool = true,
        sealProgramHash: Bool = true,
        restartWindow: Duration = .seconds(10), pageRewriteLimit: Int = 2
    ) {
        self.restartWindow = restartWindow
        self.pageRewriteLimit = max(0, pageRewriteLimit)
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
        self.sealProgramHash = sealProgramHash
    }

    /// The defaults, under the name earlier versions used for the settings of real links.
    /// Nothing in the settings depends on the link's timing any more: the writer matches
    /// answers to blocks by their order, so the library, the CLI and the simulator all use
    /// `PartialFlashSettings()`.
    public static var overALink: PartialFlashSettings { PartialFlashSettings() }

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
    /// How long a restarted board is looked for (`PartialFlashSettings.restartWindow`).
    public static let restartWindow = TimerID("partial-flash.restart-window")
}
