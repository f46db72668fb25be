import Transport

/// What the flashing session itself tells the user (its children report their own values), as
/// values: which full path follows and why, the estimate that chose the path. `FlowWords` words
/// them; tests assert the values.
public enum SessionReport: FlowReportValue {
    /// The full update goes over McuMgr (note).
    case fullUpdateOverMcuMgr
    /// The full update goes by Nordic DFU, `secure` or legacy; `askedBy`: the option that asked
    /// for it, as the front door names it, else the board has no McuMgr service (note).
    case fullUpdateByNordicDFU(secure: Bool, askedBy: String?)
    /// The read-back found the board in its Nordic bootloader: recovering it by Nordic DFU,
    /// `secure` or legacy, then reading it back (note).
    case bootloaderAtReadBack(secure: Bool)
    /// McuMgr found the file's image already active in slot 0 and sent nothing, and the read-back
    /// found `found` in the program region: partial flashing writes it (note).
    case activeImageRewrittenByPartialFlash(found: ProgramFound)
    /// The estimates of the possible paths, and the one chosen (note).
    case estimated(PathDecision)
    /// A dry run ended; nothing was written (note).
    case dryRunEnded

    public var kind: FlowReportKind { .note }
}

/// What a read-back found in the program region instead of the file's program.
public enum ProgramFound: Sendable, Equatable {
    /// A program header whose hash is blank (all `FF`), at `address`.
    case blankHeader(address: UInt32)
    /// Another program's header, at `address`.
    case otherProgram(address: UInt32)
    /// The program's flash unfinished: the board starts in pairing mode.
    case unfinished
}
