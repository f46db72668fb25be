import Transport

/// What the Secure and legacy DFU flows tell the user, as values: the facts (offsets, the step,
/// why the link or the transfer started again) without the words. `FlowWords` in the Flashing
/// module words them; tests assert the values.
public enum NordicDFUReport: FlowReportValue {
    /// Connected to the board's application: entering its bootloader (note).
    case enteringBootloader(NordicDFUProtocol)
    /// The run started on a board already in its bootloader ("DfuTarg") (note).
    case recoveringFromBootloader
    /// A connection to the bootloader failed; trying again (retry).
    case reconnecting(TransportError)
    /// The link dropped during `step`; reconnecting to the bootloader, the legacy flow to start
    /// the transfer again (retry).
    case linkLost(during: NordicDFUStep, reason: DisconnectReason, restartsTransfer: Bool)
    /// The init packet was accepted; the image of `imageBytes` follows (trace).
    case initPacketAccepted(imageBytes: Int)

    // Secure DFU

    /// The bootloader already holds the whole init packet: executing it (trace).
    case initPacketStored
    /// The bootloader's checksum of the init packet did not match: sending it again (retry).
    case initPacketMismatch
    /// No packet receipt came after `sent` bytes: asking for the checksum (retry).
    case noPacketReceipt(sent: Int)
    /// A packet receipt at `offset` while `sent` bytes were sent: checking (retry).
    case packetReceiptBehind(offset: Int, sent: Int)
    /// The object at `objectStart` is sent again, its checksum wrong at `offset` (retry).
    case objectResent(objectStart: Int, mismatchAt: Int)
    /// No answer to `step`: asking the bootloader where it is (retry).
    case noAnswer(to: NordicDFUStep)
    /// The bootloader holds `offset` bytes, a whole object: executing the last object (trace).
    case executingLastObject(offset: Int)
    /// The bootloader holds `offset` bytes: the transfer goes on from there (trace).
    case resuming(offset: Int)
    /// The link closed while the last Execute awaited its answer: reconnecting to see whether
    /// the new application runs (note).
    case closedDuringFinalValidation(DisconnectReason)
    /// The board came back in its bootloader after the final validation: the loss counts (retry).
    case bootloaderAfterFinalValidation

    // Legacy DFU

    /// The transfer starts again from a reset of the bootloader (retry).
    case transferRestarted(LegacyRestartCause)
    /// The image was activated: checking that the board left its bootloader (trace).
    case checkingApplication

    public var kind: FlowReportKind {
        switch self {
        case .enteringBootloader, .recoveringFromBootloader, .closedDuringFinalValidation: return .note
        case .initPacketAccepted, .initPacketStored, .executingLastObject, .resuming, .checkingApplication:
            return .trace
        case .reconnecting, .linkLost, .initPacketMismatch, .noPacketReceipt, .packetReceiptBehind, .objectResent,
            .noAnswer, .bootloaderAfterFinalValidation, .transferRestarted:
            return .retry
        }
    }
}

/// Why the legacy bootloader is reset and the transfer started again (it cannot resume).
public enum LegacyRestartCause: Sendable, Equatable {
    /// Start DFU found an earlier, unfinished transfer.
    case unfinishedTransfer
    /// A packet receipt at `offset` while `sent` bytes were sent.
    case packetReceiptMismatch(offset: Int, sent: Int)
    /// No packet receipt came after `sent` bytes.
    case noPacketReceipt(sent: Int)
    /// The bootloader answered with an error: its notification's bytes.
    case bootloaderError([UInt8])
    /// The bootloader no longer holds the validated image.
    case validatedImageLost
    /// The bootloader did not start the validated image.
    case validatedImageNotStarted
    /// No answer to `step`.
    case noAnswer(to: NordicDFUStep)
}

/// A step of a Nordic DFU update, as reports and errors name it.
public enum NordicDFUStep: Sendable, Equatable {
    case buttonlessEntry, bootloaderEntry, reconnection
    /// Legacy DFU's Start DFU, which erases the old application.
    case startDFU
    case initPacket, initPacketExecution, packetReceiptSetting, firmwareSelection
    /// The data object starting at this offset of the image.
    case object(start: Int)
    case objectExecution(start: Int)
    /// Legacy DFU: the firmware sent after Receive firmware.
    case firmwareTransfer
    case validation, finalValidation, activation, bootloaderReset, end
}

extension NordicDFUStep {
    /// The step as errors and reports name it ("the init packet", "the object at offset 4096").
    public var name: String {
        switch self {
        case .buttonlessEntry: return "the buttonless entry"
        case .bootloaderEntry: return "the entry into the bootloader"
        case .reconnection: return "the reconnection"
        case .startDFU: return "Start DFU (the erase of the old application)"
        case .initPacket: return "the init packet"
        case .initPacketExecution: return "the init packet's execution"
        case .packetReceiptSetting: return "the packet receipt setting"
        case .firmwareSelection: return "the firmware selection"
        case let .object(start): return "the object at offset \(start)"
        case let .objectExecution(start): return "the execution of the object at offset \(start)"
        case .firmwareTransfer: return "the firmware transfer"
        case .validation: return "the validation of the image"
        case .finalValidation: return "the final validation of the image"
        case .activation: return "the activation"
        case .bootloaderReset: return "the bootloader reset"
        case .end: return "the end"
        }
    }
}
