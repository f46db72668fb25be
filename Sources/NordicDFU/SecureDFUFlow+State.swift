import NordicDFUFrames
import Transport

/// The states of Secure DFU and the data each holds (docs/protocols/nordic-dfu.md §2.5, §2.6).
extension SecureDFUFlow {
    /// Where the update stands, with the data that means something there. A state that waits
    /// for a control-point answer names the request; `sentAt` is when a request whose answer
    /// starts flash work (the init's Execute, a data Create) was written.
    enum State: Equatable {
        case idle
        /// On the application: the buttonless entry was written.
        case buttonless
        /// The entry was accepted; the board resets into its bootloader.
        case waitingForReset
        /// The link is down; a connection to the bootloader is asked for.
        case reconnecting(Reconnect)
        /// On the bootloader: Select command was sent.
        case selectingCommand(Link)
        /// Create command was sent.
        case creatingCommand(Link)
        /// Receipts were turned off; the init packet then goes from byte `from`.
        case sendingCommand(Link, from: Int)
        /// The init packet's checksum was asked for.
        case checkingCommand(Link)
        /// The init packet's Execute was sent.
        case executingCommand(Link, sentAt: Duration)
        /// The packet receipts were set, before Select data.
        case settingReceipts(Link)
        /// The packet receipts were set again, before the rest of `object` goes.
        case restoringReceipts(DataObject)
        /// Select data was sent.
        case selectingData(Link)
        /// Create data was sent for the object.
        case creating(DataObject, sentAt: Duration)
        /// The bootloader's flash queue is full: the next packets go at `wake`.
        case waitingForFlash(DataObject, wake: Duration)
        /// A receipt interval of packets went out.
        case awaitingReceipt(DataObject)
        /// The object's checksum was asked for.
        case checking(DataObject)
        /// The object's Execute was sent (`final`: the last object, whose Execute validates the
        /// image; `resume`: an object the bootloader held after a link loss).
        case executing(DataObject, final: Bool, resume: Bool)
        case done
    }

    /// A connection to the bootloader.
    struct Link: Equatable {
        /// The packet size the connection's MTU allows.
        let packetSize: Int
    }

    /// Waiting for the bootloader's link.
    struct Reconnect: Equatable {
        /// Connection attempts that failed in a row.
        var failures = 0
        /// The link dropped while the last Execute awaited its answer and the loss is not
        /// counted yet: it is the update's end if the board comes back on its new application, a
        /// retry if it comes back in its bootloader.
        var lostAtValidation = false
    }

    /// The data object being sent, from `start` to `end` of the image.
    struct DataObject: Equatable {
        let link: Link
        /// The bootloader's largest object (its answer to Select data).
        let maxObject: Int
        let start: Int
        let end: Int
        /// The position in the image: bytes up to here were sent.
        var sent: Int

        /// Packets of the object at the connection's packet size.
        var packets: Int { (end - start + link.packetSize - 1) / max(link.packetSize, 1) }
    }

    /// The step has a control-point request outstanding (the response timer runs).
    var awaitsAnswer: Bool {
        switch state {
        case .idle, .buttonless, .waitingForReset, .reconnecting, .waitingForFlash, .awaitingReceipt, .done:
            return false
        default: return true
        }
    }

    var step: NordicDFUStep {
        switch state {
        case .idle, .buttonless, .waitingForReset: return .buttonlessEntry
        case .reconnecting: return .reconnection
        case .selectingCommand, .creatingCommand, .sendingCommand, .checkingCommand: return .initPacket
        case .executingCommand: return .initPacketExecution
        case .settingReceipts, .restoringReceipts: return .packetReceiptSetting
        case .selectingData: return .firmwareSelection
        case let .creating(object, _), let .waitingForFlash(object, _), let .awaitingReceipt(object),
            let .checking(object):
            return .object(start: object.start)
        case .executing(_, true, _): return .finalValidation
        case let .executing(object, _, _): return .objectExecution(start: object.start)
        case .done: return .end
        }
    }

    var expectedOpcode: UInt8 {
        switch state {
        case .selectingCommand, .selectingData: return 0x06
        case .creatingCommand, .creating: return 0x01
        case .sendingCommand, .settingReceipts, .restoringReceipts: return 0x02
        case .checkingCommand, .checking, .awaitingReceipt: return 0x03
        case .executingCommand, .executing: return 0x04
        default: return 0xFF
        }
    }
}

extension SecureDFUFlow.State {
    /// The bootloader's link, in the states on it.
    var link: SecureDFUFlow.Link? {
        switch self {
        case let .selectingCommand(link), let .creatingCommand(link), let .sendingCommand(link, _),
            let .checkingCommand(link), let .executingCommand(link, _), let .settingReceipts(link),
            let .selectingData(link):
            return link
        case let .restoringReceipts(object), let .creating(object, _), let .waitingForFlash(object, _),
            let .awaitingReceipt(object), let .checking(object), let .executing(object, _, _):
            return object.link
        case .idle, .buttonless, .waitingForReset, .reconnecting, .done:
            return nil
        }
    }

    /// A step of the init command (a timeout there starts the command again).
    var isCommand: Bool {
        switch self {
        case .selectingCommand, .creatingCommand, .sendingCommand, .checkingCommand, .executingCommand: return true
        default: return false
        }
    }
}

/// The CRC-32 of the image's first bytes, for each length asked for: extended from the last
/// one when the next is beyond it (the usual case), so a whole run costs one pass over the image.
struct ImagePrefixCRC: Sendable {
    private var offset = 0
    private var running = CRC32()
    private var known: [Int: UInt32] = [0: 0]

    mutating func of(_ image: [UInt8], first n: Int) -> UInt32 {
        if let c = known[n] { return c }
        if n < offset { return CRC32.checksum(image[0..<n]) }
        running.update(image[offset..<n])
        offset = n
        known[n] = running.value
        return running.value
    }
}
