import Diagnostics
import Transport

extension FlowWords {
    public static func text(of r: SessionReport) -> String {
        switch r {
        case .fullUpdateOverMcuMgr:
            return "full update over McuMgr: the image goes to the second slot, MCUboot swaps it in"
        case let .fullUpdateByNordicDFU(secure, askedBy):
            let why =
                askedBy.map { "as \($0) asks" }
                ?? "the board has no McuMgr service, and its bootloader speaks \(secure ? "Secure" : "legacy") DFU"
            return "full update by Nordic \(secure ? "Secure" : "legacy") DFU (\(why))"
        case let .bootloaderAtReadBack(secure):
            return "the read-back found the board in its Nordic bootloader (\"DfuTarg\"): recovering it by Nordic "
                + "\(secure ? "Secure" : "legacy") DFU as at the start of a session, then reading it back"
        case let .activeImageRewrittenByPartialFlash(found):
            return
                "the full update sent nothing (this image is already active in slot 0, and MCUboot cannot swap it in "
                + "again), but the read-back found \(words(found)): writing the program region by partial flashing, "
                + "then reading it back"
        case let .estimated(decision): return "decision: \(decision.summary)"
        case .dryRunEnded: return "dry run: nothing was written"
        }
    }

    /// What a read-back found in the program region, in words.
    static func words(_ found: ProgramFound) -> String {
        switch found {
        case let .blankHeader(address): return "a blank program header at \(Hex.address(address))"
        case let .otherProgram(address): return "another program at \(Hex.address(address))"
        case .unfinished: return "the program unfinished (the board starts in pairing mode)"
        }
    }
}
