import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

extension LegacyCheck {
    /// What a board could do now: answer the pending request, send a packet receipt or the
    /// end of the transfer, or reset (after the entry, Activate or Reset), bent by `variant`:
    /// 0 leaves it as a faithful board would send it.
    mutating func answer(variant v: UInt8) -> [FlowEvent] {
        var answer: LegacyDFUNotification
        switch pending {
        case .entry where !answered, .control(.activateAndReset) where !answered, .control(.reset) where !answered:
            answered = true
            return v & 7 == 5 ? [] : [.disconnected(.remoteTerminated)]
        case let .control(request) where !answered || request == .receiveFirmware:
            switch request {
            case .start: answer = .response(opcode: 0x01, status: 0x01)
            case .initParameters: answer = .response(opcode: 0x02, status: 0x01)
            case .receiveFirmware where cursor == image.count: answer = .response(opcode: 0x03, status: 0x01)
            case .receiveFirmware where packetsSinceAnswer > 0: answer = .receipt(bytesReceived: UInt32(cursor))
            case .validate: answer = .response(opcode: 0x04, status: 0x01)
            default: return lastAnswer.map { [.notification(NordicGATT.legacyControlPoint, $0)] } ?? []
            }
            answered = true
        default:
            return lastAnswer.map { [.notification(NordicGATT.legacyControlPoint, $0)] } ?? []
        }
        packetsSinceAnswer = 0
        answer = bend(answer, v)
        lastAnswer = answer.bytes
        let event = FlowEvent.notification(NordicGATT.legacyControlPoint, answer.bytes)
        return v & 7 == 7 ? [event, event] : [event]
    }

    /// Bends an answer: an error status, a wrong receipt count, an image-size report,
    /// another opcode's success, an early end of transfer.
    private func bend(_ n: LegacyDFUNotification, _ v: UInt8) -> LegacyDFUNotification {
        switch (v & 7, n) {
        case let (1, .response(op, _)):
            let status: LegacyDFUStatus =
                switch op {
                case 0x01: .invalidState
                case 0x04: .crcError
                default: .operationFailed
                }
            return .response(opcode: op, status: status.rawValue)
        case let (1, .receipt(count)), let (2, .receipt(count)):
            return .receipt(bytesReceived: UInt32(max(0, Int(count) + Int(v >> 3 & 7) * 4 - 16)))
        case let (3, .response(op, _)):
            let statuses: [UInt8] = [0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xFF]
            return .response(opcode: op, status: statuses[Int(v >> 3) % statuses.count])
        case (4, _): return .imageSize(UInt32(cursor))
        case let (5, .response(op, _)): return .response(opcode: op == 0x05 ? 0x01 : op &+ 1, status: 0x01)
        case (6, _): return .response(opcode: 0x03, status: 0x01)
        default: return n
        }
    }

    /// The checks at the end of a run.
    func finished(_ outcome: Result<NordicDFUResult, any Error>?, link: NordicLinkCheck) {
        guard let outcome else { fatalError("finish without an outcome") }
        switch outcome {
        case let .success(result):
            require(validated, "success, but the board never validated the whole image")
            require(
                result.verified && result.dfuProtocol == .legacy && result.applicationBytes == image.count,
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
        // The bootloader cannot resume: every transfer after the first costs a retry, or follows
        // one of the (at most 3) entries from the application or a connection the driver did not ask for.
        let allowed = options.retryLimit + 1 + 3 + link.spuriousConnects
        require(
            startWrites <= allowed + 1,
            "\(startWrites) transfers started: more than \(options.retryLimit) retries allow")
        require(
            firmwareBytes <= startWrites * image.count, "\(firmwareBytes) firmware bytes in \(startWrites) transfers")
    }
}
