import NordicDFUFrames
import Transport

/// Legacy DFU on the bootloader's link: Start DFU, the init packet, the firmware with its
/// receipts, Validate and Activate (docs/protocols/nordic-dfu.md §3.5).
extension LegacyDFUFlow {
    mutating func startTransfer(on link: Link) -> [FlowAction] {
        result.verified = false
        state = .starting(link)
        return [
            .subscribe(NordicGATT.legacyControlPoint),
            .write(
                NordicGATT.legacyControlPoint, LegacyDFURequest.start(mode: LegacyDFURequest.applicationMode).bytes,
                .request),
            .write(NordicGATT.legacyPacket, LegacyImageSizes(application: UInt32(image.count)).bytes, .command),
            .startTimer(Self.responseTimer, options.startTimeout)
        ]
    }

    mutating func answer(_ n: LegacyDFUNotification) -> [FlowAction] {
        let cancel: [FlowAction] = [.cancelTimer(Self.responseTimer)]
        switch (state, n) {
        case let (.starting(link), .response(0x01, 0x01)):
            state = .sendingInit(link)
            return cancel + [
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.initParameters(complete: false).bytes, .request),
                .write(NordicGATT.legacyPacket, initPacket, .command),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.initParameters(complete: true).bytes, .request),
                .startTimer(Self.responseTimer, options.responseTimeout)
            ]
        case (.starting, .response(0x01, LegacyDFUStatus.invalidState.rawValue)):
            // An earlier, unfinished transfer in this bootloader session.
            return cancel + restart(.unfinishedTransfer)
        case let (.sendingInit(link), .response(0x02, 0x01)):
            result.bytesSent += initPacket.count
            var transfer = Transfer(link: link)
            let requests: [FlowAction] = [
                Self.report(.initPacketAccepted(imageBytes: image.count)),
                .write(
                    NordicGATT.legacyControlPoint,
                    LegacyDFURequest.packetReceiptRequest(options.legacyPacketReceipts).bytes, .request),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.receiveFirmware.bytes, .request)
            ]
            let batch = sendBatch(&transfer)
            state = .receiving(transfer)
            return cancel + requests + batch
        case (.receiving(var transfer), .receipt(let count)):
            let c = Int(count)
            if c == transfer.sent {
                if transfer.sent == image.count { return [] }  // the completion answer follows
                let progress: [FlowAction] = [
                    .cancelTimer(Self.receiptTimer),
                    .report(.progress(done: transfer.sent, total: image.count, unit: .bytes))
                ]
                let batch = sendBatch(&transfer)
                state = .receiving(transfer)
                return progress + batch
            }
            if c < transfer.sent, transfer.sent == image.count { return [] }
            return restart(.packetReceiptMismatch(offset: c, sent: transfer.sent))
        case let (.receiving(transfer), .response(0x03, 0x01)):
            guard transfer.sent == image.count else { return fail(.unexpectedAnswer(step: step.name, bytes: n.bytes)) }
            state = .validating(transfer.link)
            return cancel + [
                .report(.progress(done: transfer.sent, total: image.count, unit: .bytes)), .report(.phase(.verify)),
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.validate.bytes, .request),
                .startTimer(Self.responseTimer, options.responseTimeout)
            ]
        case (.receiving, .response(0x03, LegacyDFUStatus.operationFailed.rawValue)),
            (.validating, .response(0x04, LegacyDFUStatus.crcError.rawValue)):
            return [.cancelTimer(Self.receiptTimer)] + cancel
                + restart(.bootloaderError(n.bytes))
        case (.activating, .response(0x05, _)):
            return restart(.validatedImageLost)
        case (.validating, .response(0x04, 0x01)):
            state = .activating(Activation(requests: 1))
            result.verified = true
            return cancel + [
                .write(NordicGATT.legacyControlPoint, LegacyDFURequest.activateAndReset.bytes, .request),
                .startTimer(Self.resetTimer, options.entryTimeout)
            ]
        case let (_, .response(op, status)) where status != 0x01 && op == expectedOpcode:
            return fail(.legacyRejected(step: step.name, opcode: op, status: status))
        default:
            return []
        }
    }

    /// Sends the next packets, up to one receipt interval.
    private mutating func sendBatch(_ transfer: inout Transfer) -> [FlowAction] {
        var actions: [FlowAction] = []
        let n = options.legacyPacketReceipts == 0 ? Int.max : Int(options.legacyPacketReceipts)
        var count = 0
        while transfer.sent < image.count, count < n {
            let chunk = Array(image[transfer.sent..<min(image.count, transfer.sent + transfer.link.packetSize)])
            actions.append(.write(NordicGATT.legacyPacket, chunk, .command))
            result.bytesSent += chunk.count
            transfer.sent += chunk.count
            count += 1
        }
        if transfer.sent == image.count {
            // The answer to Receive firmware comes once the last packet is in flash.
            return actions + [.cancelTimer(Self.receiptTimer), .startTimer(Self.responseTimer, options.responseTimeout)]
        }
        return actions + [.startTimer(Self.receiptTimer, options.receiptTimeout)]
    }

    private var expectedOpcode: UInt8 {
        switch state {
        case .starting: return 0x01
        case .sendingInit: return 0x02
        case .receiving: return 0x03
        case .validating: return 0x04
        default: return 0xFF
        }
    }

    var step: NordicDFUStep {
        switch state {
        case .idle, .entering: return .bootloaderEntry
        case .reconnecting: return .reconnection
        case .starting: return .startDFU
        case .sendingInit: return .initPacket
        case .receiving: return .firmwareTransfer
        case .validating: return .validation
        case .activating, .verifying: return .activation
        case .resetting: return .bootloaderReset
        case .done: return .end
        }
    }
}

extension LegacyDFUFlow.State {
    /// The bootloader's link of a transfer state.
    var link: LegacyDFUFlow.Link? {
        switch self {
        case let .starting(link), let .sendingInit(link), let .validating(link): return link
        case let .receiving(transfer): return transfer.link
        default: return nil
        }
    }

    /// The bootloader answered on the current link.
    mutating func bootloaderAnswered() {
        switch self {
        case var .starting(link):
            link.answered = true
            self = .starting(link)
        case var .sendingInit(link):
            link.answered = true
            self = .sendingInit(link)
        case var .validating(link):
            link.answered = true
            self = .validating(link)
        case var .receiving(transfer):
            transfer.link.answered = true
            self = .receiving(transfer)
        default: break
        }
    }
}
