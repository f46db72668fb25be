import Flashing
import McuMgr
import NordicDFU
import SMP
import Testing
import Transport

/// The words of the full updates' typed reports: every case of `NordicDFUReport` and
/// `McuMgrReport`, shown as `FlowWords` shows it, pinned as one snapshot. The flows and their
/// tests deal in values; a change of wording shows here, and only here.
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

    static func lines(_ reports: [AnyFlowReport]) -> String {
        reports.map { "\($0.kind.rawValue): \(FlowWords.text(of: $0))" }.joined(separator: "\n")
    }
}
