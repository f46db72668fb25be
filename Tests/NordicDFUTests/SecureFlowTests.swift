import FirmwareImage
import NordicDFUFrames
import Testing
import Transport
@testable import NordicDFU

@Suite struct SecureFlowTests {
    let cp = NordicGATT.secureControlPoint
    typealias H = Harness<SecureDFUFlow>

    /// A flow already connected to "DfuTarg" whose init packet the bootloader holds.
    func inDataPhase(_ app: DFUApplication, options: NordicDFUOptions = NordicDFUOptions()) -> H {
        var h = H(SecureDFUFlow(application: app, options: options))
        h.feed(.start(Boards.secureBootloader))
        let initPacket = app.secureInitPacket.bytes
        h.feed(
            .notification(
                cp, SecureDFUResponse.selected(maxSize: 512, offset: 56, crc: CRC32.checksum(initPacket)).bytes))
        h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x04).bytes))
        h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x02).bytes))
        return h
    }

    @Test("A board that is not bonded: the error says how to pair")
    func notBonded() {
        var h = H(SecureDFUFlow(application: Boards.application(100)))
        let first = h.feed(.start(Boards.secureApp))
        #expect(H.writes(first, to: NordicGATT.buttonlessBonded) == [[0x01]])
        h.feed(.notification(NordicGATT.buttonlessBonded, [0x20, 0x01, 0x07]))
        #expect(h.error == .notBonded)
        #expect(h.error?.description.contains("bluetoothctl pair") == true)
    }

    @Test("An application without bonds: the unbonded buttonless characteristic is used")
    func unbondedVariant() {
        var h = H(SecureDFUFlow(application: Boards.application(100)))
        h.feed(.start(Boards.secureApp))
        let next = h.feed(
            .writeFailed(NordicGATT.buttonlessBonded, .characteristicNotFound(NordicGATT.buttonlessBonded)))
        #expect(H.writes(next, to: NordicGATT.buttonlessUnbonded) == [[0x01]])
        h.feed(.notification(NordicGATT.buttonlessUnbonded, [0x20, 0x01, 0x01]))
        let reconnect = h.feed(.disconnected(.remoteTerminated))
        // The board resets into its bootloader, which the transport may find at another address.
        #expect(reconnect.contains(.connect(after: NordicDFUOptions().reconnectDelay, to: .bootloader)))
    }

    @Test("A stored init packet is executed, not sent again; a fresh one is created, sent and checked")
    func initPacketResume() {
        let app = Boards.application(5000)
        let initPacket = app.secureInitPacket.bytes
        let h = inDataPhase(app)
        #expect(H.writes(h.all, to: NordicGATT.securePacket).isEmpty)
        #expect(H.writes(h.all, to: cp).contains([0x04]))

        var fresh = H(SecureDFUFlow(application: app))
        fresh.feed(.start(Boards.secureBootloader))
        let create = fresh.feed(.notification(cp, SecureDFUResponse.selected(maxSize: 512, offset: 0, crc: 0).bytes))
        #expect(H.writes(create, to: cp) == [[0x01, 0x01, 56, 0, 0, 0]])
        fresh.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x01).bytes))
        let sent = fresh.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x02).bytes))
        #expect(H.writes(sent, to: NordicGATT.securePacket).flatMap { $0 } == initPacket)
        #expect(H.writes(sent, to: cp) == [[0x03]])
        _ = h
    }

    @Test("An init checksum that never matches ends after the bounded attempts, with advice")
    func checksumNeverMatches() {
        var h = H(SecureDFUFlow(application: Boards.application(100)))
        h.feed(.start(Boards.secureBootloader))
        h.feed(.notification(cp, SecureDFUResponse.selected(maxSize: 512, offset: 0, crc: 0).bytes))
        for _ in 0..<3 {
            h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x01).bytes))
            h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x02).bytes))
            h.feed(.notification(cp, SecureDFUResponse.checksum(offset: 56, crc: 0xDEAD_BEEF).bytes))
        }
        #expect(h.error == .checksumMismatch(step: "the init packet", attempts: 3))
        #expect(h.flow.outcome != nil)
    }

    @Test("A silent bootloader: each timeout asks again, and the flow gives up at the limit")
    func silence() {
        var options = NordicDFUOptions()
        options.timeoutLimit = 4
        var h = H(SecureDFUFlow(application: Boards.application(100), options: options))
        h.feed(.start(Boards.secureBootloader))
        for _ in 0..<4 {
            let again = h.feed(.timerFired(TimerID("response")))
            #expect(H.writes(again, to: cp) == [[0x06, 0x01]])
        }
        h.feed(.timerFired(TimerID("response")))
        #expect(h.error == .timedOut(step: "the init packet", attempts: 5))
    }

    @Test("A response timer firing while no answer is awaited (stale) changes nothing: the init command is not skipped")
    func staleResponseTimer() {
        let app = Boards.application(100)
        var h = H(SecureDFUFlow(application: app))
        h.feed(.start(Boards.secureBootloader))
        h.feed(.disconnected(.remoteTerminated))
        // Reconnecting: the timer was cancelled with the link, and fires anyway.
        #expect(h.feed(.timerFired(TimerID("response"))).isEmpty)
        let again = h.feed(.connected(Boards.secureBootloader))
        #expect(H.writes(again, to: cp) == [[0x06, 0x01]])
        // Waiting for the page erase after the first packets of an object (11 beside the
        // settings write the init's Execute started and the erase): a stale firing neither
        // writes nor counts as a timeout.
        let big = Boards.application(4096)
        var d = inDataPhase(big)
        d.feed(.notification(cp, SecureDFUResponse.selected(maxSize: 4096, offset: 0, crc: 0).bytes))
        let first = d.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x01).bytes))
        #expect(H.writes(first, to: NordicGATT.securePacket).count == 11)
        #expect(d.feed(.timerFired(TimerID("response"))).isEmpty)
        #expect(d.flow.budget.timeouts == 0 && d.flow.result.retries == 0)
        // The flash wait's timer was set for when the settings (2 × (85 ms + 224 × 41 µs)), the
        // erase (85 ms) and a packet's write must have ended: then the rest go with the checksum request.
        let rest = d.feed(.timerFired(TimerID("flash-wait")))
        #expect(H.writes(rest, to: NordicGATT.securePacket).flatMap { $0 } == Array(big.bytes[(11 * 244)...]))
        #expect(H.writes(rest, to: cp) == [[0x03]])
    }

    @Test("Malformed and foreign answers: a malformed one fails with its bytes, a stale one is ignored")
    func hostileAnswers() {
        var h = H(SecureDFUFlow(application: Boards.application(100)))
        h.feed(.start(Boards.secureBootloader))
        #expect(h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x04).bytes)).isEmpty)
        h.feed(.notification(cp, [0x60, 0x06, 0x01, 0x00]))
        #expect(h.error == .unexpectedAnswer(step: "the init packet", bytes: [0x60, 0x06, 0x01, 0x00]))
    }

    @Test("Resume: whole objects held are executed, and 08 counts as already executed")
    func resumeAtObjectBoundary() {
        let app = Boards.application(10_000)
        var h = inDataPhase(app)
        let exec = h.feed(
            .notification(
                cp,
                SecureDFUResponse.selected(
                    maxSize: 4096, offset: 4096,
                    crc: CRC32.checksum(app.bytes[0..<4096])
                ).bytes))
        #expect(H.writes(exec, to: cp) == [[0x04]])
        let next = h.feed(.notification(cp, SecureDFUResponse.failure(opcode: 0x04, result: 0x08, extended: nil).bytes))
        #expect(H.writes(next, to: cp) == [SecureDFURequest.create(.data, size: 4096).bytes])
    }

    @Test("Resume inside an object continues without a new Create; a wrong CRC restarts the object")
    func resumeInsideAnObject() {
        let app = Boards.application(10_000)
        var h = inDataPhase(app)
        let cont = h.feed(
            .notification(
                cp,
                SecureDFUResponse.selected(
                    maxSize: 4096, offset: 4096 + 488,
                    crc: CRC32.checksum(app.bytes[0..<(4096 + 488)])
                ).bytes))
        let packets = H.writes(cont, to: NordicGATT.securePacket)
        #expect(packets.first == Array(app.bytes[(4096 + 488)..<(4096 + 488 + 244)]))
        #expect(!H.writes(cont, to: cp).contains { $0.first == 0x01 })

        var bad = inDataPhase(app)
        let restart = bad.feed(.notification(cp, SecureDFUResponse.selected(maxSize: 4096, offset: 5000, crc: 1).bytes))
        #expect(H.writes(restart, to: cp) == [SecureDFURequest.create(.data, size: 4096).bytes])
    }

    @Test("A packet receipt behind what was sent leads to a checksum request, and a corrupt object is sent again")
    func lostPackets() {
        let app = Boards.application(8192)
        var receipts = NordicDFUOptions()
        receipts.securePacketReceipts = 12
        var h = inDataPhase(app, options: receipts)
        h.feed(.notification(cp, SecureDFUResponse.selected(maxSize: 4096, offset: 0, crc: 0).bytes))
        h.now += .milliseconds(300)  // the settings write after the init has ended
        let batch = h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x01).bytes))
        #expect(H.writes(batch, to: NordicGATT.securePacket).count == 12)
        let check = h.feed(.notification(cp, SecureDFUResponse.checksum(offset: 11 * 244, crc: 7).bytes))
        #expect(H.writes(check, to: cp) == [[0x03]])
        let again = h.feed(.notification(cp, SecureDFUResponse.checksum(offset: 11 * 244, crc: 7).bytes))
        #expect(H.writes(again, to: cp) == [SecureDFURequest.create(.data, size: 4096).bytes])
    }

    @Test("The bootloader's hash failure at the end is explained")
    func hashFailure() {
        let app = Boards.application(400)
        var h = inDataPhase(app)
        h.feed(
            .notification(
                cp, SecureDFUResponse.selected(maxSize: 4096, offset: 400, crc: CRC32.checksum(app.bytes)).bytes))
        h.feed(.notification(cp, SecureDFUResponse.failure(opcode: 0x04, result: 0x0B, extended: 0x0C).bytes))
        guard case .secureRejected? = h.error else {
            Issue.record("expected a rejection, got \(String(describing: h.error))"); return
        }
        #expect(h.error?.description.contains("hash") == true)
    }
}
