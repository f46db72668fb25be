import Diagnostics
import PartialFlashing
import Transport

extension FlowWords {
    public static func text(of r: PartialFlashReport) -> String {
        switch r {
        case let .sent(bytes): return "→ \(Hex.bytes(bytes, separator: " "))"
        case let .received(bytes): return "← \(Hex.bytes(bytes, separator: " "))"
        case .ignoredNotPartialFlashing: return "ignored: not a partial-flashing answer"
        case .ignoredStray: return "ignored: stray notification"
        case let .ignoredRepeatedAnswer(region): return "ignored: repeated answer for region \(region)"
        case let .ignoredNotification(c): return "ignored notification from \(c)"
        case let .writeFailed(error): return "write failed: \(error)"
        case .connectedAgain: return "connected again"
        case let .boardRestarts(reason): return "the board restarts: \(reason)"
        case let .boardResets(reason): return "the board resets: \(reason)"
        case let .noDisconnect(waited): return "no disconnect within \(waited.shortText); closing the link"
        case let .noDisconnectAfterReset(waited):
            return "no disconnect within \(waited.shortText) of FF 01; closing the link"
        case .noDisconnectAfterPairingSwitch: return "no disconnect after FF 00; closing the link"
        case .noAnswerToStatus: return "no answer to STATUS; asking again"
        case let .noAnswerToRegionInfo(id): return "no answer to REGION_INFO \(id); asking again"
        case let .connectFailed(error, attempt, of): return "connecting failed (\(error)); attempt \(attempt) of \(of)"
        case .backInApplicationMode: return "the board came back running its program"
        case let .memoryMap(map):
            return "board: protocol \(map.protocolVersion), \(map.mode) mode, runtime \(map.runtime.hash.hexString), "
                + "program \(map.program.hash.hexString) at \(Hex.address(map.program.start))"
        case let .inPairingMode(map):
            return "in pairing mode; runtime \(map.runtime.hash.hexString) and program "
                + "\(map.program.hash.hexString) as before"
        case let .readBack(mode, program):
            return "read back: \(mode) mode, program \(program.hash.hexString) at \(Hex.address(program.start))"
        case let .verified(program):
            return "verified: application mode, program \(program.hash.hexString) at \(Hex.address(program.start))"
        case .nothingUnfinished: return "the board runs its program: no earlier write is unfinished"
        case .resettingHungBoard:
            return "resetting the board (FF 01) before anything else: a block whose answer never came may be a flash "
                + "operation the board waits for for ever"
        case .backAfterReset: return "the board is back after its reset (FF 01)"
        case .switchingToPairingMode:
            return "the board runs its program; restarting it in Bluetooth pairing mode to write it"
        case .restartingIntoProgram: return "restarting the board into its program"
        case let .leftRunning(at):
            return "the board already runs this program, which this computer finished on it (\(at)); "
                + "it is left running, untouched"
        case let .confirmingUpToDate(inPairingMode):
            let why =
                inPairingMode
                ? "the board already holds this program and waits in pairing mode"
                : "the board reports this program, but this computer did not finish it on this board: another "
                    + "client's unfinished flash of it reports the same hash until the board restarts"
            return why + "; restarting it into its program (FF 01) to confirm"
        case let .confirmedAfterRestart(cost):
            return "confirmed: after a restart (FF 01) the board runs this program in application mode; "
                + "the restart and read-back took \(cost.shortText)"
        case let .provingRestart(reconnects):
            let why =
                reconnects > 0
                ? "the link was connected again \(reconnects) time\(reconnects == 1 ? "" : "s") during the write, so "
                    + "the board may have written in application mode"
                : "the board was written in application mode"
            return why + ", where application mode does not show that it restarted after END_OF_TRANSMISSION; "
                + "restarting it into its program (FF 01) to prove the flash ended"
        case let .notContinuing(why):
            return "not continuing the earlier unfinished write: \(text(of: why)); starting over"
        case .cameBackInPairingMode:
            return "the board came back in pairing mode: an unfinished flash left its mark "
                + "(flashIncomplete), so its program may be incomplete"
        case .rewritingPage:
            return "the board is in pairing mode because a flash was not finished (flashIncomplete); "
                + "its flash holds the whole program, so one page is written again as it is and the flash is ended"
        case let .notReadBack(window, lastError):
            return "not read back: " + ProgramCheck.unreachableReason(window: window, lastError: lastError)
        case let .rewriteDoesNotFit(reason, error): return "\(reason) (\(error))"
        case let .partial(write): return text(of: write)
        case let .continuing(write, block):
            return text(of: write) + "; continuing the unfinished write at block \(block + 1)"
        case let .continuingTornWrite(block, start, end):
            return "the board shows no program since it restarted during this computer's earlier write of this program "
                + "(its first page was torn then); continuing that write at block \(block + 1) "
                + "in \(Hex.address(start))-\(Hex.address(end))"
        case let .upToDate(hash, finishedHere):
            let found = "the board already runs this program (program hash \(hash.hexString))"
            if let finishedHere { return found + "; this computer finished it on this board (\(finishedHere))" }
            return found
                + "; confirming with a restart into its program (FF 01), as this computer did not finish it there"
        case let .fullRequired(reason): return reason.description
        case let .planFailed(reason, error): return "\(reason) (\(error))"
        case let .flashIncomplete(blocks):
            return "the board reports this program but came back in pairing mode after a restart: a flash that was not "
                + "finished left its mark (flashIncomplete), and the program hash sits in the first page such a flash "
                + "writes, so the program may be incomplete; writing all of it again: \(blocks) blocks"
        }
    }

    public static func text(of r: PartialFlashWriterReport) -> String {
        switch r {
        case let .writing(blocks, bytes, pages): return "writing \(blocks) blocks (\(bytes) bytes, \(pages) pages)"
        case let .rewritingOnePage(address, blocks):
            return "rewriting the page at \(Hex.address(address)) as it is (\(blocks) blocks), "
                + "then END_OF_TRANSMISSION, to clear the mark of an unfinished flash"
        case let .continuingWrite(block, of, address):
            return "continuing the unfinished write at block \(block + 1) of \(of) "
                + "(\(Hex.address(address))): \(block) blocks were written before"
        case let .sendingBlock(block, of, address, first):
            return "block \(block + 1)/\(of) at \(Hex.address(address)), packets \(first)-\(first &+ 3)"
        case let .sent(bytes, purpose): return "→ \(Hex.bytes(bytes, separator: " ")) (\(text(of: purpose)))"
        case .answerAfterLastBlock: return "unexpected answer after the last block: a block may have been skipped"
        case .barrierBeforeHash: return "every block but the program hash is written: a barrier first"
        case let .rewinding(block, address, why, inDoubt, writes):
            return "resuming at block \(block + 1) (\(Hex.address(address))): \(text(of: why)), for block "
                + "\(inDoubt + 1), whose words may be written \(writes) times otherwise"
        case let .lateAnswer(block, written):
            return "the late answer to block \(block + 1): \(written ? "written" : "dropped (01 AA)"); its page is "
                + "written again after the restart all the same"
        case let .droppedAfterFence(reason):
            return "the link dropped after FF 00 (\(reason)): the restart, or a drop before it; checking"
        case let .droppedAfterEnd(reason): return "the link dropped after END_OF_TRANSMISSION: \(reason)"
        case .connectedAfterFence: return "connected again after FF 00"
        case let .reconnectedResuming(block, address, why, inDoubt):
            return "connected again; resuming at block \(block + 1) (\(Hex.address(address))): \(text(of: why)), "
                + "for block \(inDoubt + 1)"
        case .fenceFirst: return "the block in flight may still be pending on the board: the fence first"
        case .restarted(.expectsPacketZero): return "the board expects packet 0: it restarted, as FF 00 asked"
        case .restarted(.statusFirst):
            return "STATUS answered with no 01 AA before it: the board restarted, or has none of the block"
        case let .notRestarted(sign): return "the board did not restart: \(text(of: sign))"
        case let .fillingIn(block, address, problem, first):
            return
                "block \(block + 1) at \(Hex.address(address)): \(problem); sending its packets \(first)-\(first &+ 3) "
                + "again (the board ignores those it has)"
        case let .fencing(block, address, problem):
            return "block \(block + 1) at \(Hex.address(address)): \(problem); restarting the board behind its "
                + "pending work (FF 00) and going on from its page on a fresh connection"
        case let .outOfOrderAgain(block, address):
            return "block \(block + 1) at \(Hex.address(address)): out of order again; restarting the board behind "
                + "its pending work (FF 00) and going on from its page on a fresh connection"
        case let .outOfOrder(block, address, first):
            return "block \(block + 1) at \(Hex.address(address)): packet out of order; resending as "
                + "packets \(first)-\(first &+ 3)"
        case .fenceAgain: return "the board did not restart after FF 00; sending it again"
        case .endAgain: return "the board did not restart after 02; sending it again"
        case .stepUnanswered: return "no 01 AA to the out-of-order packet; resynchronising with REGION_INFO 2"
        case let .linkDropped(reason): return "the link dropped (\(reason)); connecting again"
        case let .droppedBeforeRestart(reason):
            return "the link dropped (\(reason)) before the board could restart for FF 00; "
                + "connecting again (counted as a reconnection)"
        }
    }

    static func text(of purpose: PartialFlashRequestPurpose) -> String {
        switch purpose {
        case .again: return "again"
        case .resynchronise: return "resynchronise packet numbers"
        case .endOfTransmission: return "end of transmission"
        case .fence: return "restart once every pending flash event ran"
        case let .step(expects):
            return "out of order on purpose: the board answers 01 AA and expects \(expects), away from the numbers a "
                + "restart leaves"
        case let .restartProbe(aaMeansRestart):
            return "did the board restart? " + (aaMeansRestart ? "01 AA if it did" : "01 AA if it did not")
        case .statusAfterProbe: return "its answer comes after any 01 AA"
        }
    }

    static func text(of why: PartialFlashRewind) -> String {
        switch why {
        case .pageOpener: return "the first block of its page"
        case .wholeProgram: return "the whole program, as the program hash may be written already"
        }
    }

    static func text(of sign: PartialFlashNoRestartSign) -> String {
        switch sign {
        case let .noProbe(group): return "no check can tell for packets numbered from \(group)"
        case let .hasPackets(group): return "it has packets of the block numbered from \(group) (01 AA to packet 249)"
        case .lateAnswer: return "the block's late answer came on the new connection"
        case .statusFirst: return "STATUS answered with no 01 AA before it"
        case let .noAnswer(waited): return "no answer to the check within \(waited.shortText)"
        }
    }

    static func text(of w: PlannedWrite) -> String {
        "the board runs the same runtime (\(w.runtimeHash.hexString)) with the program at \(Hex.address(w.programStart)), "
            + "so only the program is written: \(w.blocks) blocks, \(w.pages) page\(w.pages == 1 ? "" : "s")"
    }

    public static func text(of m: ResumeMismatch) -> String {
        switch m {
        case let .format(saved, reads): return "it was saved in format \(saved), this tool reads \(reads)"
        case let .anotherProgram(saved, file): return "it belongs to another program (\(saved), the file's is \(file))"
        case let .anotherRuntime(board, saved):
            return "the board's runtime is \(board), the saved write was for \(saved)"
        case let .anotherRegion(boardStart, boardEnd, savedStart, savedEnd):
            return "the board's program region is \(Hex.address(boardStart))-\(Hex.address(boardEnd)), "
                + "the saved write was for \(Hex.address(savedStart))-\(Hex.address(savedEnd))"
        case let .programHash(reported, whileWriting):
            return "the board reports program hash \(reported), an unfinished write leaves \(whileWriting) there"
        case let .plan(blocks, block, savedBlocks, address):
            return "it does not fit this file's plan of \(blocks) blocks (saved: block \(block + 1) of \(savedBlocks) "
                + "at \(Hex.address(address)))"
        case let .anotherProgramOrRuntime(program, runtime):
            return "it belongs to another program or runtime (\(program), runtime \(runtime))"
        case let .planOnEmptyBoard(blocks): return "it does not fit this file's plan of \(blocks) blocks"
        case let .programDoesNotFit(error): return "the file's program does not fit the board (\(error))"
        }
    }
}
