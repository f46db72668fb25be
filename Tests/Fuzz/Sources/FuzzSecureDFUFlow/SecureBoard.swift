import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

extension SecureCheck {
    /// What a board could answer now (the pending request, else a packet receipt, else the
    /// last answer again), bent by `variant`: 0 leaves it as a faithful board would send it.
    mutating func answer(variant v: UInt8) -> [FlowEvent] {
        if case let .buttonless(ch) = pending, !answered {
            answered = true
            let code: [UInt8] = [
                ButtonlessMessage.success, ButtonlessMessage.notBonded, ButtonlessMessage.operationFailed,
                ButtonlessMessage.busy, ButtonlessMessage.success, ButtonlessMessage.success
            ]
            let op: UInt8 = v & 0x40 == 0 ? 0x01 : 0x02
            return [
                .notification(ch, ButtonlessMessage.response(opcode: op, result: code[Int(v & 7) % code.count]).bytes)
            ]
        }
        var response: SecureDFUResponse
        if case let .control(request) = pending, !answered {
            answered = true
            response = faithful(to: request, maxObject: [4096, 1024, 256, 12][Int(v >> 6)])
        } else if packetsSinceAnswer > 0, phase == .data {
            response = .checksum(offset: UInt32(held[1]), crc: crc(.data, held[1]))
        } else {
            return lastAnswer.map { [.notification(NordicGATT.secureControlPoint, $0)] } ?? []
        }
        packetsSinceAnswer = 0
        response = bend(response, v)
        lastAnswer = response.bytes
        let event = FlowEvent.notification(NordicGATT.secureControlPoint, response.bytes)
        return v & 7 == 7 ? [event, event] : [event]
    }

    private func faithful(to request: SecureDFURequest, maxObject: UInt32) -> SecureDFUResponse {
        switch request {
        case .select(SecureDFUObjectType.command.rawValue):
            return .selected(maxSize: 512, offset: UInt32(held[0]), crc: crc(.command, held[0]))
        case .select:
            return .selected(maxSize: maxObject, offset: UInt32(held[1]), crc: crc(.data, held[1]))
        case .calculateChecksum:
            let type = phase ?? .command
            return .checksum(offset: UInt32(held[index(type)]), crc: crc(type, held[index(type)]))
        default:
            return .success(opcode: request.opcode)
        }
    }

    /// Bends an answer: a wrong CRC, a moved offset, an error result, a claim of the whole
    /// object, an empty answer, another opcode's success.
    private func bend(_ r: SecureDFUResponse, _ v: UInt8) -> SecureDFUResponse {
        let shift = Int(v >> 3 & 7) * 4 - 16
        switch (v & 7, r) {
        case let (1, .selected(m, o, c)): return .selected(maxSize: m, offset: o, crc: c ^ 1)
        case let (1, .checksum(o, c)): return .checksum(offset: o, crc: c ^ 1)
        case let (1, .success(op)): return .failure(opcode: op, result: 0x05, extended: nil)
        case let (2, .selected(m, o, _)):
            let moved = max(0, Int(o) + shift)
            return .selected(maxSize: m, offset: UInt32(moved), crc: crc(phase ?? .data, moved))
        case let (2, .checksum(o, _)):
            let moved = max(0, Int(o) + shift)
            return .checksum(offset: UInt32(moved), crc: crc(phase ?? .data, moved))
        case (3, _):
            let results: [UInt8] = [0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0A, 0x0B, 0x00]
            let result = results[Int(v >> 3) % results.count]
            return .failure(opcode: r.opcode, result: result, extended: result == 0x0B ? v : nil)
        case let (4, .selected(m, _, _)):
            let all = reference(phase ?? .data).count
            return .selected(maxSize: m, offset: UInt32(all), crc: crc(phase ?? .data, all))
        case (4, .checksum):
            let all = reference(phase ?? .data).count
            return .checksum(offset: UInt32(all), crc: crc(phase ?? .data, all))
        case let (5, .selected(m, _, _)): return .selected(maxSize: m & 0xFF == 12 ? 3 : m, offset: 0, crc: 0)
        case (5, .checksum): return .checksum(offset: 0, crc: 0)
        case let (6, r):
            let ops: [UInt8] = [0x01, 0x02, 0x04, 0x0C]
            return .success(opcode: ops[Int(v >> 3) % ops.count] == r.opcode ? 0x0C : ops[Int(v >> 3) % ops.count])
        default: return r
        }
    }

    /// The checks at the end of a run.
    func finished(_ outcome: Result<NordicDFUResult, any Error>?, link: NordicLinkCheck) {
        guard let outcome else { fatalError("finish without an outcome") }
        switch outcome {
        case let .success(result):
            require(initConfirmed, "success, but the board never confirmed the CRC of the whole init command")
            require(imageConfirmed, "success, but the board never confirmed the CRC of the whole image")
            require(
                result.verified && result.dfuProtocol == .secure && result.applicationBytes == image.count,
                "success with \(result)")
            require(
                result.retries <= options.retryLimit,
                "success after \(result.retries) retries (limit \(options.retryLimit))")
            require(
                result.bytesSent == packetBytes,
                "the result counts \(result.bytesSent) bytes sent, \(packetBytes) were written")
        case let .failure(error):
            require(error is NordicDFUError, "the flow failed with \(error), not a NordicDFUError")
        }
        // Every object sent again, init command created again, costs a retry (a connection the
        // driver did not ask for may restart one too).
        let allowed = options.retryLimit + 1 + link.spuriousConnects
        let repeatedCreates = createsAt.values.reduce(0) { $0 + $1 - 1 }
        require(
            repeatedCreates <= allowed,
            "\(repeatedCreates) objects created again: more than \(options.retryLimit) retries allow")
        require(
            commandCreates <= allowed + 1,
            "the init command created \(commandCreates) times: more than \(options.retryLimit) retries allow")
        require(
            dataBytes <= (allowed + 1) * image.count && packetBytes - dataBytes <= (allowed + 1) * initPacket.count,
            "\(dataBytes) image bytes and \(packetBytes - dataBytes) init bytes written: more than \(options.retryLimit) retries allow"
        )
    }
}
