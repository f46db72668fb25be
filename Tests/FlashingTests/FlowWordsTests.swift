import FirmwareImage
import LinkModel
import McuMgr
import NordicDFU
import PartialFlashing
import PartialFlashingFrames
import SMP
import Testing
import Transport
@testable import Flashing

/// The words of the flows' typed reports: every case of `NordicDFUReport`, `McuMgrReport`,
/// `PartialFlashReport` and `SessionReport`, shown as `FlowWords` shows it, pinned as snapshots.
/// The flows and their tests deal in values; a change of wording shows here, and only here.
@Suite struct FlowWordsTests {
    static let dropped = DisconnectReason.supervisionTimeout
    static let refused = TransportError.connectFailed("le-connection-abort-by-local")

    static let nordic: [NordicDFUReport] = [
        .enteringBootloader(.secure), .enteringBootloader(.legacy), .recoveringFromBootloader,
        .reconnecting(refused),
        .linkLost(during: .object(start: 4096), reason: dropped, restartsTransfer: false),
        .linkLost(during: .firmwareTransfer, reason: .remoteTerminated, restartsTransfer: true),
        .initPacketAccepted(imageBytes: 18_304), .initPacketStored, .initPacketMismatch,
        .noPacketReceipt(sent: 2400), .packetReceiptBehind(offset: 1200, sent: 2400),
        .objectResent(objectStart: 4096, mismatchAt: 6000), .noAnswer(to: .packetReceiptSetting),
        .noAnswer(to: .objectExecution(start: 8192)), .executingLastObject(offset: 8192), .resuming(offset: 5000),
        .closedDuringFinalValidation(dropped), .bootloaderAfterFinalValidation,
        .transferRestarted(.unfinishedTransfer), .transferRestarted(.packetReceiptMismatch(offset: 200, sent: 400)),
        .transferRestarted(.noPacketReceipt(sent: 400)), .transferRestarted(.bootloaderError([0x10, 0x03, 0x06])),
        .transferRestarted(.validatedImageLost), .transferRestarted(.validatedImageNotStarted),
        .transferRestarted(.noAnswer(to: .startDFU)), .checkingApplication
    ]

    static let nordicWords = """
        note: entering the Nordic secure bootloader (buttonless DFU)
        note: entering the Nordic legacy bootloader (micro:bit DFU control)
        note: the board is in its bootloader ("DfuTarg"): recovering it with a full update
        retry: reconnecting: could not connect: le-connection-abort-by-local
        retry: link lost during the object at offset 4096 (the link timed out (board out of range or reset)): reconnecting to the bootloader
        retry: link lost during the firmware transfer (the board closed the connection): starting the transfer again
        trace: init packet accepted: 18304 bytes follow
        trace: init packet already stored: executing it
        retry: init packet checksum mismatch: sending it again
        retry: no packet receipt at 2400 bytes: asking for the checksum
        retry: packet receipt at 1200 bytes, 2400 sent: checking
        retry: checksum mismatch at 6000 bytes: sending the object at 4096 again
        retry: no answer to the packet receipt setting: asking where the bootloader is
        retry: no answer to the execution of the object at offset 8192: asking where the bootloader is
        trace: bootloader holds 8192 bytes: executing the last object
        trace: resuming at 5000 bytes
        note: the link closed during the final validation (the link timed out (board out of range or reset)): reconnecting to see what runs
        retry: the board came back in its bootloader after the final validation
        retry: the bootloader holds an unfinished transfer: resetting the bootloader and starting the transfer again
        retry: packet receipt at 200 bytes, 400 sent: resetting the bootloader and starting the transfer again
        retry: no packet receipt at 400 bytes: resetting the bootloader and starting the transfer again
        retry: the bootloader reported 10 03 06: resetting the bootloader and starting the transfer again
        retry: the bootloader no longer holds the validated image: resetting the bootloader and starting the transfer again
        retry: the bootloader did not start the validated image: resetting the bootloader and starting the transfer again
        retry: no answer to Start DFU (the erase of the old application): resetting the bootloader and starting the transfer again
        trace: checking that the board left its bootloader
        """

    @Test("Every Nordic DFU report is worded as the command line shows it")
    func nordicDFUWords() {
        #expect(Self.lines(Self.nordic.map { AnyFlowReport($0) }) == Self.nordicWords)
    }

    static let header = SMPHeader(operation: .read, length: 2, group: SMPGroup(rawValue: 1), sequence: 7, command: 0)
    static let frame = header.bytes + [0xA0, 0xBF]

    static let mcumgr: [McuMgrReport] = [
        .requestRetried(command: "image state read", cause: .busy, attempt: 2),
        .requestRetried(command: "OS reset", cause: .noAnswerWithin(.seconds(10)), attempt: 3),
        .requestResent(command: "image state write"), .uploadRetried(offset: 4950, cause: .noAnswer),
        .uploadRetried(offset: 0, cause: .busy), .offsetMismatch(expected: 2475), .uploadMismatch, .resetAgain,
        .silentLink(timeouts: 2, tookNoBytes: false), .silentLink(timeouts: 2, tookNoBytes: true),
        .linkLost(dropped), .connectAttemptFailed(attempt: 1, error: refused),
        .parametersUnavailable(.notReported), .parametersUnavailable(.noAnswer),
        .deviceBuffers(count: 4, size: 2475, frameLimit: 2475, inFlight: 3), .alreadyRunning,
        .alreadyRunningAfterTest, .alreadyHeld, .clearingSecondarySlot, .resetting(reconnectIn: .milliseconds(4500)),
        .resumingUpload(offset: 7425), .framesFitOneWrite(cause: .uploadUnanswered, writeSize: 244),
        .framesFitOneWrite(cause: .chunkUnanswered, writeSize: 244),
        .framesFitOneWrite(cause: .deviceExpects(offset: 2475), writeSize: 244),
        .writesShortened(timeouts: 4, writeSize: 122), .readingBack, .ignoredLateNotification,
        .writeFailed(.notConnected(operation: "write")), .unreadableNotification(.truncatedHeader(available: 3)),
        .linkKeptAfterReset, .frame(sent: true, header: header, bytes: frame, shownBytes: 16),
        .frame(sent: false, header: header, bytes: frame, shownBytes: 4),
        .stateReadFrame(sent: true, bytes: frame, shownBytes: 16),
        .stateReadFrame(sent: false, bytes: frame, shownBytes: 4)
    ]

    static let mcumgrWords = """
        retry: image state read: device busy, attempt 2
        retry: OS reset: no answer within 10.0 seconds, attempt 3
        retry: image state write again on the new connection
        retry: image upload at offset 4950: no answer
        retry: image upload at offset 0: device busy
        retry: device expects offset 2475; resending from there
        retry: the device's copy does not match the file; uploading again
        retry: the device still holds the image in slot 1: it did not reset; resetting again
        retry: no answer 2 times in a row; reconnecting
        retry: the device took no new bytes through 2 timeouts; reconnecting
        retry: link lost (the link timed out (board out of range or reset)); reconnecting
        retry: connection attempt 1 failed (could not connect: le-connection-abort-by-local); trying again
        note: McuMgr parameters unavailable (the device does not report them): one frame per write, no pipelining
        note: McuMgr parameters unavailable (no answer): one frame per write, no pipelining
        note: device buffers: 4 × 2475 bytes; frames up to 2475 bytes, 3 in flight
        note: the device already runs this image
        note: the device already runs the image (it reset after the test was set)
        note: the device already holds this image; skipping the upload
        note: the secondary slot holds another image; clearing it first
        note: the device is resetting; reconnecting in 4.5 s
        note: resuming the upload at offset 7425
        note: the upload went unanswered: the link loses writes, so each upload frame now fits one write of 244 bytes
        note: an upload chunk went unanswered: the link loses writes, so each upload frame now fits one write of 244 bytes
        note: the device expects offset 2475: the link loses writes, so each upload frame now fits one write of 244 bytes
        note: the upload went unanswered 4 times in a row: the link may be dropping long writes, so writes now carry at most 122 bytes, one frame at a time
        note: reading the board's slots back after the failure
        trace: ignored a notification that arrived after the link dropped
        trace: write failed: write needs a connection, and there is none
        trace: dropped an unreadable notification: SMP frame too short: 3 of the 8 header bytes; the notification was cut short or is not SMP
        trace: the device did not drop the link after reset; disconnecting
        trace: → SMP v2 read image group (1) command 0 seq 7 length 2 08 00 00 02 00 01 07 00 A0 BF
        trace: ← SMP v2 read image group (1) command 0 seq 7 length 2 08 00 00 02 … (10 bytes)
        trace: SMP → 08 00 00 02 00 01 07 00 A0 BF (10 bytes)
        trace: SMP ← 08 00 00 02 … (10 bytes)
        """

    @Test("Every McuMgr report is worded as the command line shows it")
    func mcuMgrWords() {
        #expect(Self.lines(Self.mcumgr.map { AnyFlowReport($0) }) == Self.mcumgrWords)
    }

    static let runtime: [UInt8] = [0x5A, 0x47, 0x16, 0x75, 0x1E, 0xF2, 0x69, 0x1E]
    static let programHash: [UInt8] = [0x3E, 0x00, 0xE2, 0x00, 0x3B, 0x00, 0xE8, 0x00]
    static let programRegion = RegionInfo(id: 2, start: 0x47000, end: 0x49070, hash: programHash)
    static let map = BoardMemoryMap(
        protocolVersion: 1, mode: .application, runtime: RegionInfo(id: 1, start: 0x1C000, end: 0x46B00, hash: runtime),
        program: programRegion)
    static let write = PlannedWrite(runtimeHash: runtime, programStart: 0x47000, blocks: 130, pages: 3)
    static let noFit = FullFlashReason.regionDoesNotFit(program: 0x47000..<0x80000, board: 0x47000..<0x73000)
    static let tooLarge = PartialFlashError.programDoesNotFit(program: 0x47000..<0x80000, writable: 0x47000..<0x73000)

    static let partial: [PartialFlashReport] = [
        .sent([0x00, 0x02]), .received([0x01, 0xFF]), .ignoredNotPartialFlashing, .ignoredStray,
        .ignoredRepeatedAnswer(region: 1), .ignoredNotification(from: PartialFlashingGATT.characteristic),
        .writeFailed(.notConnected(operation: "write")), .connectedAgain, .boardRestarts(dropped),
        .boardResets(.remoteTerminated), .noDisconnect(waited: .seconds(3)),
        .noDisconnectAfterReset(waited: .milliseconds(2500)), .noDisconnectAfterPairingSwitch, .noAnswerToStatus,
        .noAnswerToRegionInfo(2), .connectFailed(refused, attempt: 2, of: 4), .backInApplicationMode,
        .memoryMap(map), .inPairingMode(map), .readBack(mode: .pairing, program: programRegion),
        .verified(program: programRegion), .nothingUnfinished, .resettingHungBoard, .backAfterReset,
        .switchingToPairingMode, .restartingIntoProgram, .leftRunning(finishedAt: "2026-11-29T07:49:53Z"),
        .confirmingUpToDate(inPairingMode: true), .confirmingUpToDate(inPairingMode: false),
        .confirmedAfterRestart(cost: .milliseconds(1330)), .provingRestart(reconnects: 2),
        .provingRestart(reconnects: 0),
        .notContinuing(.format(saved: 2, reads: 1)),
        .notContinuing(.anotherProgram(saved: "1122334455667788", file: "3E00E2003B00E800")),
        .notContinuing(.anotherRuntime(board: "0102030405060708", saved: "5A4716751EF2691E")),
        .notContinuing(.anotherRegion(boardStart: 0x48000, boardEnd: 0x49070, savedStart: 0x47000, savedEnd: 0x49070)),
        .notContinuing(.programHash(reported: "FFFFFFFFFFFFFFFF", whileWriting: "3E00E2003B00E800")),
        .notContinuing(.plan(blocks: 130, savedBlock: 65, savedBlocks: 130, address: 0x48040)),
        .notContinuing(.anotherProgramOrRuntime(program: "1122334455667788", runtime: "5A4716751EF2691E")),
        .notContinuing(.planOnEmptyBoard(blocks: 130)), .notContinuing(.programDoesNotFit(tooLarge)),
        .cameBackInPairingMode, .rewritingPage, .notReadBack(window: .seconds(10), lastError: nil),
        .notReadBack(window: .milliseconds(19699), lastError: refused), .rewriteDoesNotFit(noFit, tooLarge),
        .partial(write), .partial(PlannedWrite(runtimeHash: runtime, programStart: 0x47000, blocks: 12, pages: 1)),
        .continuing(write, block: 64), .continuingTornWrite(block: 0, regionStart: 0x47000, regionEnd: 0x49070),
        .upToDate(programHash: programHash, finishedHere: "2026-11-29T07:49:53Z"),
        .upToDate(programHash: programHash, finishedHere: nil),
        .fullRequired(.runtimeDiffers(board: runtime, file: [0x31, 0x2C, 0x23, 0x76, 0xF1, 0x71, 0x70, 0x6B])),
        .planFailed(noFit, tooLarge), .flashIncomplete(blocks: 143)
    ]

    static let partialWords = """
        trace: → 00 02
        trace: ← 01 FF
        trace: ignored: not a partial-flashing answer
        trace: ignored: stray notification
        trace: ignored: repeated answer for region 1
        trace: ignored notification from E97D3B10-251D-470A-A062-FA1922DFA9A8 in service E97DD91D-251D-470A-A062-FA1922DFA9A8
        trace: write failed: write needs a connection, and there is none
        trace: connected again
        trace: the board restarts: the link timed out (board out of range or reset)
        trace: the board resets: the board closed the connection
        trace: no disconnect within 3 s; closing the link
        trace: no disconnect within 2500 ms of FF 01; closing the link
        trace: no disconnect after FF 00; closing the link
        retry: no answer to STATUS; asking again
        retry: no answer to REGION_INFO 2; asking again
        retry: connecting failed (could not connect: le-connection-abort-by-local); attempt 2 of 4
        retry: the board came back running its program
        trace: board: protocol 1, application mode, runtime 5A4716751EF2691E, program 3E00E2003B00E800 at 0x00047000
        trace: in pairing mode; runtime 5A4716751EF2691E and program 3E00E2003B00E800 as before
        trace: read back: pairing mode, program 3E00E2003B00E800 at 0x00047000
        trace: verified: application mode, program 3E00E2003B00E800 at 0x00047000
        trace: the board runs its program: no earlier write is unfinished
        note: resetting the board (FF 01) before anything else: a block whose answer never came may be a flash operation the board waits for for ever
        note: the board is back after its reset (FF 01)
        note: the board runs its program; restarting it in Bluetooth pairing mode to write it
        note: restarting the board into its program
        note: the board already runs this program, which this computer finished on it (2026-11-29T07:49:53Z); it is left running, untouched
        note: the board already holds this program and waits in pairing mode; restarting it into its program (FF 01) to confirm
        note: the board reports this program, but this computer did not finish it on this board: another client's unfinished flash of it reports the same hash until the board restarts; restarting it into its program (FF 01) to confirm
        note: confirmed: after a restart (FF 01) the board runs this program in application mode; the restart and read-back took 1330 ms
        note: the link was connected again 2 times during the write, so the board may have written in application mode, where application mode does not show that it restarted after END_OF_TRANSMISSION; restarting it into its program (FF 01) to prove the flash ended
        note: the board was written in application mode, where application mode does not show that it restarted after END_OF_TRANSMISSION; restarting it into its program (FF 01) to prove the flash ended
        note: not continuing the earlier unfinished write: it was saved in format 2, this tool reads 1; starting over
        note: not continuing the earlier unfinished write: it belongs to another program (1122334455667788, the file's is 3E00E2003B00E800); starting over
        note: not continuing the earlier unfinished write: the board's runtime is 0102030405060708, the saved write was for 5A4716751EF2691E; starting over
        note: not continuing the earlier unfinished write: the board's program region is 0x00048000-0x00049070, the saved write was for 0x00047000-0x00049070; starting over
        note: not continuing the earlier unfinished write: the board reports program hash FFFFFFFFFFFFFFFF, an unfinished write leaves 3E00E2003B00E800 there; starting over
        note: not continuing the earlier unfinished write: it does not fit this file's plan of 130 blocks (saved: block 66 of 130 at 0x00048040); starting over
        note: not continuing the earlier unfinished write: it belongs to another program or runtime (1122334455667788, runtime 5A4716751EF2691E); starting over
        note: not continuing the earlier unfinished write: it does not fit this file's plan of 130 blocks; starting over
        note: not continuing the earlier unfinished write: the file's program does not fit the board (the program (0x00047000-0x00080000) does not fit the region the board can take (0x00047000-0x00073000); use a full flash); starting over
        note: the board came back in pairing mode: an unfinished flash left its mark (flashIncomplete), so its program may be incomplete
        note: the board is in pairing mode because a flash was not finished (flashIncomplete); its flash holds the whole program, so one page is written again as it is and the flash is ended
        note: not read back: the board did not accept a connection within 10 s of its restart: it does not advertise, which a board in pairing mode does, so most likely its program keeps Bluetooth off in application mode (MakeCode programs without the Bluetooth extension), or it is out of range
        note: not read back: the board did not accept a connection within 19699 ms of its restart (last attempt: could not connect: le-connection-abort-by-local): it does not advertise, which a board in pairing mode does, so most likely its program keeps Bluetooth off in application mode (MakeCode programs without the Bluetooth extension), or it is out of range
        note: the file's program (0x00047000-0x00080000) does not fit the board's program region (0x00047000-0x00073000), so a full flash is needed (the program (0x00047000-0x00080000) does not fit the region the board can take (0x00047000-0x00073000); use a full flash)
        decision: runtime-matches: the board runs the same runtime (5A4716751EF2691E) with the program at 0x00047000, so only the program is written: 130 blocks, 3 pages
        decision: runtime-matches: the board runs the same runtime (5A4716751EF2691E) with the program at 0x00047000, so only the program is written: 12 blocks, 1 page
        decision: runtime-matches: the board runs the same runtime (5A4716751EF2691E) with the program at 0x00047000, so only the program is written: 130 blocks, 3 pages; continuing the unfinished write at block 65
        decision: unfinished-write: the board shows no program since it restarted during this computer's earlier write of this program (its first page was torn then); continuing that write at block 1 in 0x00047000-0x00049070
        decision: up-to-date: the board already runs this program (program hash 3E00E2003B00E800); this computer finished it on this board (2026-11-29T07:49:53Z)
        decision: up-to-date: the board already runs this program (program hash 3E00E2003B00E800); confirming with a restart into its program (FF 01), as this computer did not finish it there
        decision: runtime-differs: the board's runtime 5A4716751EF2691E differs from the file's runtime 312C2376F171706B, so a full flash is needed
        decision: region-does-not-fit: the file's program (0x00047000-0x00080000) does not fit the board's program region (0x00047000-0x00073000), so a full flash is needed (the program (0x00047000-0x00080000) does not fit the region the board can take (0x00047000-0x00073000); use a full flash)
        decision: flash-incomplete: the board reports this program but came back in pairing mode after a restart: a flash that was not finished left its mark (flashIncomplete), and the program hash sits in the first page such a flash writes, so the program may be incomplete; writing all of it again: 143 blocks
        """

    @Test("Every partial-flashing report is worded as the command line shows it, a decision with its code")
    func partialFlashWords() {
        #expect(Self.lines(Self.partial.map { AnyFlowReport($0) }) == Self.partialWords)
    }

    static let decision = PathDecision(
        estimates: [
            PathEstimate(path: .partial, parts: [.init(name: "write", duration: .milliseconds(6500))], counts: [:]),
            PathEstimate(path: .nordicDFU, parts: [.init(name: "upload", duration: .milliseconds(13700))], counts: [:])
        ], chosen: .partial, basis: .fastest, marginSeconds: 7.2,
        link: LinkEstimate(profile: .deviceRequested, source: .measured))

    static let session: [SessionReport] = [
        .fullUpdateOverMcuMgr, .fullUpdateByNordicDFU(secure: true, askedBy: nil),
        .fullUpdateByNordicDFU(secure: false, askedBy: "--full-path nordic"), .bootloaderAtReadBack(secure: true),
        .bootloaderAtReadBack(secure: false),
        .activeImageRewrittenByPartialFlash(found: .blankHeader(address: 0x35400)),
        .activeImageRewrittenByPartialFlash(found: .otherProgram(address: 0x35400)),
        .activeImageRewrittenByPartialFlash(found: .unfinished), .estimated(decision), .dryRunEnded
    ]

    static let sessionWords = """
        note: full update over McuMgr: the image goes to the second slot, MCUboot swaps it in
        note: full update by Nordic Secure DFU (the board has no McuMgr service, and its bootloader speaks Secure DFU)
        note: full update by Nordic legacy DFU (as --full-path nordic asks)
        note: the read-back found the board in its Nordic bootloader ("DfuTarg"): recovering it by Nordic Secure DFU as at the start of a session, then reading it back
        note: the read-back found the board in its Nordic bootloader ("DfuTarg"): recovering it by Nordic legacy DFU as at the start of a session, then reading it back
        note: the full update sent nothing (this image is already active in slot 0, and MCUboot cannot swap it in again), but the read-back found a blank program header at 0x00035400: writing the program region by partial flashing, then reading it back
        note: the full update sent nothing (this image is already active in slot 0, and MCUboot cannot swap it in again), but the read-back found another program at 0x00035400: writing the program region by partial flashing, then reading it back
        note: the full update sent nothing (this image is already active in slot 0, and MCUboot cannot swap it in again), but the read-back found the program unfinished (the board starts in pairing mode): writing the program region by partial flashing, then reading it back
        note: decision: partial (estimated 6.5 s) against nordic-dfu 13.7 s: 7.2 s faster (connection interval 15 ms, measured; MTU 247)
        note: dry run: nothing was written
        """

    @Test("Every session report is worded as the command line shows it")
    func sessionWords() {
        #expect(Self.lines(Self.session.map { AnyFlowReport($0) }) == Self.sessionWords)
    }

    static func lines(_ reports: [AnyFlowReport]) -> String {
        reports.map { r in
            let code = r.decisionCode.map { "\($0): " } ?? ""
            return "\(r.kind.rawValue): \(code)\(FlowWords.text(of: r))"
        }.joined(separator: "\n")
    }
}
