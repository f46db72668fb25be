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

    static func lines(_ reports: [AnyFlowReport]) -> String {
        reports.map { "\($0.kind.rawValue): \(FlowWords.text(of: $0))" }.joined(separator: "\n")
    }
}
