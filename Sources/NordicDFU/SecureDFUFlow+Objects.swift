import NordicDFUFrames
import Transport

/// Secure DFU requests and the answers that move the flow on: the init command, the data
/// objects with their receipts and checksums, and the resume rules (docs/protocols/nordic-dfu.md §2.5, §2.6).
extension SecureDFUFlow {
    /// A control-point request and its answer's timer; the caller has moved to the state that awaits it.
    func request(_ r: SecureDFURequest) -> [FlowAction] {
        [
            .write(NordicGATT.secureControlPoint, r.bytes, .request),
            .startTimer(Self.responseTimer, options.responseTimeout)
        ]
    }

    mutating func answer(_ r: SecureDFUResponse) -> [FlowAction] {
        let cancel: [FlowAction] = [.cancelTimer(Self.responseTimer)]
        switch (state, r) {
        case let (.selectingCommand(link), .selected(_, off, crc)):
            let o = Int(off)
            if o == initPacket.count, crc == CRC32.checksum(initPacket) {
                return cancel + [Self.report(.initPacketStored)] + executeCommand(link)
            }
            if o > 0, o < initPacket.count, crc == CRC32.checksum(initPacket[0..<o]) {
                state = .sendingCommand(link, from: o)
                return cancel + request(.setPRN(0))
            }
            return cancel + createCommand(link)
        case let (.creatingCommand(link), .success(0x01)):
            state = .sendingCommand(link, from: 0)
            return cancel + request(.setPRN(0))
        case let (.sendingCommand(link, from), .success(0x02)):
            var actions = cancel
            var at = from
            while at < initPacket.count {
                let chunk = Array(initPacket[at..<min(initPacket.count, at + link.packetSize)])
                actions.append(.write(NordicGATT.securePacket, chunk, .command))
                result.bytesSent += chunk.count
                at += chunk.count
            }
            state = .checkingCommand(link)
            return actions + request(.calculateChecksum)
        case let (.checkingCommand(link), .checksum(off, crc)):
            if Int(off) == initPacket.count, crc == CRC32.checksum(initPacket) {
                return cancel + executeCommand(link)
            }
            budget.commandMismatches += 1
            result.retries += 1
            guard budget.commandMismatches < options.objectAttempts else {
                return fail(.checksumMismatch(step: NordicDFUStep.initPacket.name, attempts: budget.commandMismatches))
            }
            return cancel + [Self.report(.initPacketMismatch)] + createCommand(link)
        case let (.executingCommand(link, sentAt), .success(0x04)):
            pacing.settingsQueued(at: sentAt, options: options)
            state = .settingReceipts(link)
            return cancel + [Self.report(.initPacketAccepted(imageBytes: image.count))]
                + request(.setPRN(options.securePacketReceipts))
        case let (.settingReceipts(link), .success(0x02)):
            state = .selectingData(link)
            return cancel + request(.select(.data))
        case let (.restoringReceipts(object), .success(0x02)):
            return cancel + sendBatch(object)
        case let (.selectingData(link), .selected(max, off, crc)):
            guard max >= 4, max % 4 == 0 else { return fail(.unexpectedAnswer(step: step.name, bytes: r.bytes)) }
            return cancel + resume(on: link, maxObject: Int(max), offset: Int(off), crc: crc)
        case let (.creating(object, sentAt), .success(0x01)):
            pacing.objectCreated(
                at: sentAt, bytes: object.end - object.start, packets: object.packets,
                packetSize: object.link.packetSize, options: options)
            return cancel + sendBatch(object)
        case let (.awaitingReceipt(object), .checksum(off, crc)):
            let o = Int(off)
            if o == object.sent, crc == prefix(o) {
                return [.cancelTimer(Self.receiptTimer)] + progress(object) + sendBatch(object)
            }
            // An early receipt: the data so far is right.
            if o < object.sent, o >= object.start, crc == prefix(o) { return [] }
            result.retries += 1
            return [
                .cancelTimer(Self.receiptTimer),
                Self.report(.packetReceiptBehind(offset: o, sent: object.sent))
            ]
                + check(object)
        case (.checking(var object), .checksum(let off, let crc)):
            let o = Int(off)
            if o == object.end, crc == prefix(o) {
                return cancel + progress(object) + execute(object, final: object.end == image.count, resume: false)
            }
            if o >= object.start, o < object.end, o % 4 == 0, crc == prefix(o) {
                object.sent = o
                state = .restoringReceipts(object)
                return cancel + request(.setPRN(options.securePacketReceipts))
            }
            return cancel + recreate(object, mismatchAt: o)
        case let (.executing(object, final, _), .success(0x04)):
            pacing.flashIdle(at: now)
            budget.objectAttempts = 0
            if final {
                result.verified = true
                return cancel + [.report(.progress(done: image.count, total: image.count, unit: .bytes))] + finish()
            }
            return cancel + progress(object) + createObject(after: object)
        case let (.executing(object, false, true), .failure(0x04, 0x08, _)):
            // SDK 15-17 answer 08 to an object executed before the link dropped.
            budget.objectAttempts = 0
            return cancel + createObject(after: object)
        case (_, .failure):
            guard r.opcode == expectedOpcode else { return [] }
            return fail(.secureRejected(step: step.name, response: r))
        default:
            return []  // a late answer to an earlier request
        }
    }

    private mutating func createCommand(_ link: Link) -> [FlowAction] {
        state = .creatingCommand(link)
        return request(.create(.command, size: UInt32(initPacket.count)))
    }

    private mutating func executeCommand(_ link: Link) -> [FlowAction] {
        state = .executingCommand(link, sentAt: now)
        return request(.execute)
    }

    private mutating func execute(_ object: DataObject, final: Bool, resume: Bool) -> [FlowAction] {
        if final { finalExecuteSent = true }
        state = .executing(object, final: final, resume: resume)
        return request(.execute)
    }

    mutating func check(_ object: DataObject) -> [FlowAction] {
        state = .checking(object)
        return request(.calculateChecksum)
    }

    /// Where to go on after Select data (docs/protocols/nordic-dfu.md §2.6).
    private mutating func resume(on link: Link, maxObject: Int, offset o: Int, crc: UInt32) -> [FlowAction] {
        if o > 0, o <= image.count, crc == prefix(o) {
            if o == image.count || o % maxObject == 0 {
                let start = o - (o % maxObject == 0 ? min(maxObject, o) : o % maxObject)
                let object = DataObject(link: link, maxObject: maxObject, start: start, end: o, sent: o)
                return [Self.report(.executingLastObject(offset: o))]
                    + execute(object, final: o == image.count, resume: true)
            }
            let start = o - o % maxObject
            let object = DataObject(
                link: link, maxObject: maxObject, start: start, end: min(start + maxObject, image.count), sent: o)
            return [Self.report(.resuming(offset: o))] + sendBatch(object)
        }
        // Not what this image would give: back to the start of the object the offset falls in.
        let at = min(max(o - 1, 0), image.count - 1)
        if o != 0 { result.retries += 1 }
        return createObject(on: link, maxObject: maxObject, start: at - at % maxObject)
    }

    private mutating func createObject(on link: Link, maxObject: Int, start: Int) -> [FlowAction] {
        let end = min(start + maxObject, image.count)
        state = .creating(
            DataObject(link: link, maxObject: maxObject, start: start, end: end, sent: start), sentAt: now)
        return request(.create(.data, size: UInt32(end - start)))
    }

    private mutating func createObject(after object: DataObject) -> [FlowAction] {
        createObject(on: object.link, maxObject: object.maxObject, start: object.end)
    }

    private mutating func recreate(_ object: DataObject, mismatchAt offset: Int) -> [FlowAction] {
        budget.objectAttempts += 1
        result.retries += 1
        guard budget.objectAttempts < options.objectAttempts else {
            return fail(
                .checksumMismatch(step: NordicDFUStep.object(start: object.start).name, attempts: budget.objectAttempts)
            )
        }
        return [Self.report(.objectResent(objectStart: object.start, mismatchAt: offset))]
            + createObject(on: object.link, maxObject: object.maxObject, start: object.start)
    }

    /// Sends the next packets of the object: those the bootloader's flash queue can take now,
    /// up to one receipt interval; then waits for the flash or the receipt.
    mutating func sendBatch(_ object: DataObject) -> [FlowAction] {
        var object = object
        var actions: [FlowAction] = []
        let n = options.securePacketReceipts == 0 ? Int.max : Int(options.securePacketReceipts)
        var count = 0
        while object.sent < object.end, count < n {
            let index = (object.sent - object.start) / object.link.packetSize
            if pacing.sendTime(ofPacket: index) > now {
                let wake = pacing.wakeTime(from: index, packets: object.packets)
                state = .waitingForFlash(object, wake: wake)
                return actions + [.startTimer(Self.delayTimer, wake - now)]
            }
            let chunk = Array(image[object.sent..<min(object.end, object.sent + object.link.packetSize)])
            actions.append(.write(NordicGATT.securePacket, chunk, .command))
            result.bytesSent += chunk.count
            object.sent += chunk.count
            count += 1
        }
        if object.sent == object.end && count < n {
            return actions + check(object)
        }
        state = .awaitingReceipt(object)
        return actions + [.startTimer(Self.receiptTimer, options.receiptTimeout)]
    }

    /// The CRC-32 of the image's first `n` bytes.
    mutating func prefix(_ n: Int) -> UInt32 { checksums.of(image, first: n) }

    func progress(_ object: DataObject) -> [FlowAction] {
        [.report(.progress(done: object.sent, total: image.count, unit: .bytes))]
    }
}
