import NordicDFUFrames
import Transport

/// Secure DFU requests and the answers that move the flow on: the init command, the data
/// objects with their receipts and checksums, and the resume rules (docs/protocols/nordic-dfu.md §2.5, §2.6).
extension SecureDFUFlow {
    mutating func request(_ r: SecureDFURequest, step next: Step) -> [FlowAction] {
        step = next
        requestedAt = now
        if case .executeData(true, _) = next { finalExecuteSent = true }
        return [
            .write(NordicGATT.secureControlPoint, r.bytes, .request),
            .startTimer(Self.responseTimer, options.responseTimeout)
        ]
    }

    mutating func answer(_ r: SecureDFUResponse) -> [FlowAction] {
        let cancel: [FlowAction] = [.cancelTimer(Self.responseTimer)]
        switch (step, r) {
        case let (.selectCommand, .selected(_, off, crc)):
            let o = Int(off)
            if o == initPacket.count, crc == CRC32.checksum(initPacket) {
                return cancel + [.report(.trace("init packet already stored: executing it"))]
                    + request(.execute, step: .executeCommand)
            }
            if o > 0, o < initPacket.count, crc == CRC32.checksum(initPacket[0..<o]) {
                sent = o
                return cancel + request(.setPRN(0), step: .commandPRNOff)
            }
            sent = 0
            return cancel + request(.create(.command, size: UInt32(initPacket.count)), step: .createCommand)
        case (.createCommand, .success(0x01)):
            sent = 0
            return cancel + request(.setPRN(0), step: .commandPRNOff)
        case (.commandPRNOff, .success(0x02)):
            var actions = cancel
            var at = sent
            while at < initPacket.count {
                let chunk = Array(initPacket[at..<min(initPacket.count, at + packetSize)])
                actions.append(.write(NordicGATT.securePacket, chunk, .command))
                result.bytesSent += chunk.count
                at += chunk.count
            }
            return actions + request(.calculateChecksum, step: .commandChecksum)
        case let (.commandChecksum, .checksum(off, crc)):
            if Int(off) == initPacket.count, crc == CRC32.checksum(initPacket) {
                return cancel + request(.execute, step: .executeCommand)
            }
            commandAttempts += 1
            result.retries += 1
            guard commandAttempts < options.objectAttempts else {
                return fail(.checksumMismatch(step: "the init packet", attempts: commandAttempts))
            }
            return cancel + [.report(.retry("init packet checksum mismatch: sending it again"))]
                + request(.create(.command, size: UInt32(initPacket.count)), step: .createCommand)
        case (.executeCommand, .success(0x04)):
            pacing.settingsQueued(at: requestedAt, options: options)
            return cancel + [.report(.trace("init packet accepted: \(image.count) bytes follow"))]
                + request(.setPRN(options.securePacketReceipts), step: .setPRN(thenSend: false))
        case let (.setPRN(thenSend), .success(0x02)):
            if thenSend { return cancel + sendBatch() }
            return cancel + request(.select(.data), step: .selectData)
        case let (.selectData, .selected(max, off, crc)):
            guard max >= 4, max % 4 == 0 else { return fail(.unexpectedAnswer(step: stepName, bytes: r.bytes)) }
            maxObject = Int(max)
            return cancel + resume(offset: Int(off), crc: crc)
        case (.createData, .success(0x01)):
            sent = objectStart
            pacing.objectCreated(
                at: requestedAt, bytes: objectEnd - objectStart, packets: packetCount(objectEnd - objectStart),
                packetSize: packetSize, options: options)
            return cancel + sendBatch()
        case let (.awaitingReceipt, .checksum(off, crc)):
            let o = Int(off)
            if o == sent, crc == prefix(o) { return [.cancelTimer(Self.receiptTimer)] + progress() + sendBatch() }
            if o < sent, o >= objectStart, crc == prefix(o) { return [] }  // an early receipt: the data so far is right
            result.retries += 1
            return [
                .cancelTimer(Self.receiptTimer), .report(.retry("packet receipt at \(o) bytes, \(sent) sent: checking"))
            ]
                + request(.calculateChecksum, step: .dataChecksum)
        case let (.dataChecksum, .checksum(off, crc)):
            let o = Int(off)
            if o == objectEnd, crc == prefix(o) {
                return cancel + progress()
                    + request(.execute, step: .executeData(final: objectEnd == image.count, resume: false))
            }
            if o >= objectStart, o < objectEnd, o % 4 == 0, crc == prefix(o) {
                sent = o
                return cancel + request(.setPRN(options.securePacketReceipts), step: .setPRN(thenSend: true))
            }
            return cancel + recreateObject(why: "checksum mismatch at \(o) bytes")
        case let (.executeData(final, _), .success(0x04)):
            pacing.flashIdle(at: now)
            objectAttempts = 0
            if final {
                result.verified = true
                return cancel + [.report(.progress(done: image.count, total: image.count, unit: .bytes))] + finish()
            }
            objectStart = objectEnd
            return cancel + progress() + createObject()
        case (.executeData(false, true), .failure(0x04, 0x08, _)):
            // SDK 15-17 answer 08 to an object executed before the link dropped.
            objectAttempts = 0
            objectStart = objectEnd
            return cancel + createObject()
        case (_, .failure):
            guard r.opcode == expectedOpcode else { return [] }
            return fail(.secureRejected(step: stepName, response: r))
        default:
            return []  // a late answer to an earlier request
        }
    }

    /// Where to go on after Select data (docs/protocols/nordic-dfu.md §2.6).
    mutating func resume(offset o: Int, crc: UInt32) -> [FlowAction] {
        if o > 0, o <= image.count, crc == prefix(o) {
            if o == image.count || o % maxObject == 0 {
                objectStart = o - (o % maxObject == 0 ? min(maxObject, o) : o % maxObject)
                objectEnd = o
                sent = o
                return [.report(.trace("bootloader holds \(o) bytes: executing the last object"))]
                    + request(.execute, step: .executeData(final: o == image.count, resume: true))
            }
            objectStart = o - o % maxObject
            objectEnd = min(objectStart + maxObject, image.count)
            sent = o
            return [.report(.trace("resuming at \(o) bytes"))] + sendBatch()
        }
        // Not what this image would give: back to the start of the object the offset falls in.
        let at = min(max(o - 1, 0), image.count - 1)
        objectStart = at - at % maxObject
        if o != 0 { result.retries += 1 }
        return createObject()
    }

    mutating func createObject() -> [FlowAction] {
        objectEnd = min(objectStart + maxObject, image.count)
        sent = objectStart
        return request(.create(.data, size: UInt32(objectEnd - objectStart)), step: .createData)
    }

    mutating func recreateObject(why: String) -> [FlowAction] {
        objectAttempts += 1
        result.retries += 1
        guard objectAttempts < options.objectAttempts else {
            return fail(.checksumMismatch(step: "the object at offset \(objectStart)", attempts: objectAttempts))
        }
        return [.report(.retry("\(why): sending the object at \(objectStart) again"))] + createObject()
    }

    /// Sends the next packets of the current object: those the bootloader's flash queue can
    /// take now, up to one receipt interval; then waits for the flash or the receipt.
    mutating func sendBatch() -> [FlowAction] {
        var actions: [FlowAction] = []
        let n = options.securePacketReceipts == 0 ? Int.max : Int(options.securePacketReceipts)
        var count = 0
        while sent < objectEnd, count < n {
            let index = (sent - objectStart) / packetSize
            if pacing.sendTime(ofPacket: index) > now {
                step = .waitingForFlash
                flashWake = pacing.wakeTime(from: index, packets: packetCount(objectEnd - objectStart))
                return actions + [.startTimer(Self.delayTimer, flashWake - now)]
            }
            let chunk = Array(image[sent..<min(objectEnd, sent + packetSize)])
            actions.append(.write(NordicGATT.securePacket, chunk, .command))
            result.bytesSent += chunk.count
            sent += chunk.count
            count += 1
        }
        if sent == objectEnd && count < n {
            return actions + request(.calculateChecksum, step: .dataChecksum)
        }
        step = .awaitingReceipt
        return actions + [.startTimer(Self.receiptTimer, options.receiptTimeout)]
    }

    /// The CRC-32 of the image's first `n` bytes: extended from the last one asked for when
    /// `n` is beyond it (the usual case), so a whole run costs one pass over the image.
    mutating func prefix(_ n: Int) -> UInt32 {
        if let c = prefixCRC[n] { return c }
        if n < crcOffset { return CRC32.checksum(image[0..<n]) }
        runningCRC.update(image[crcOffset..<n])
        crcOffset = n
        prefixCRC[n] = runningCRC.value
        return runningCRC.value
    }

    /// Packets of `bytes` at the connection's packet size.
    func packetCount(_ bytes: Int) -> Int { (bytes + packetSize - 1) / max(packetSize, 1) }

    func progress() -> [FlowAction] {
        [.report(.progress(done: sent, total: image.count, unit: .bytes))]
    }

    var expectedOpcode: UInt8 {
        switch step {
        case .selectCommand, .selectData: return 0x06
        case .createCommand, .createData: return 0x01
        case .commandPRNOff, .setPRN: return 0x02
        case .commandChecksum, .dataChecksum, .awaitingReceipt: return 0x03
        case .executeCommand, .executeData: return 0x04
        default: return 0xFF
        }
    }
}
