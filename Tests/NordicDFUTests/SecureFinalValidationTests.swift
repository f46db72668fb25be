import NordicDFUFrames
import Testing
import Transport
@testable import NordicDFU

/// The link closing while the last Execute awaits its answer: the V2 bootloader answers, writes
/// its settings and resets at once, so on a busy radio the answer can be lost with the link
/// (docs/nordic-dfu.md, "The end of a Secure DFU on a shared radio").
extension SecureFlowTests {
    /// A flow whose last Execute is out: the bootloader held the whole image after a reconnection.
    func awaitingFinalValidation(_ app: DFUApplication) -> H {
        var h = inDataPhase(app)
        let execute = h.feed(
            .notification(
                cp, SecureDFUResponse.selected(maxSize: 4096, offset: 400, crc: CRC32.checksum(app.bytes)).bytes))
        #expect(H.writes(execute, to: cp) == [SecureDFURequest.execute.bytes])
        return h
    }

    @Test("A link closed at the final validation costs no retry when the new application is found")
    func lossAtFinalValidationThenApplication() {
        let app = Boards.application(400)
        var h = awaitingFinalValidation(app)
        let lost = h.feed(.disconnected(.remoteTerminated))
        #expect(lost.contains { if case .connect(_, .bootloader) = $0 { return true } else { return false } })
        #expect(h.flow.result.retries == 0)
        h.feed(.connected(Boards.secureApp))
        guard case let .success(result)? = h.flow.outcome else {
            Issue.record("expected a success, got \(String(describing: h.flow.outcome))"); return
        }
        #expect(result.verified && result.endedOnApplication)
        #expect(result.retries == 0)
    }

    @Test("A link closed at the final validation counts its retry when the board is back in its bootloader")
    func lossAtFinalValidationThenBootloader() {
        let app = Boards.application(400)
        var h = awaitingFinalValidation(app)
        h.feed(.disconnected(.supervisionTimeout))
        let again = h.feed(.connected(Boards.secureBootloader))
        #expect(h.flow.result.retries == 1)
        #expect(h.flow.budget.losses == 1)
        #expect(h.flow.outcome == nil)
        #expect(H.writes(again, to: cp) == [SecureDFURequest.select(.command).bytes])
        #expect(again.contains(SecureDFUFlow.report(.bootloaderAfterFinalValidation)))
    }

    @Test("Losses at the final validation that keep finding the bootloader end at the link-loss limit")
    func lossesAtFinalValidationAreBounded() {
        let app = Boards.application(400)
        var options = NordicDFUOptions()
        options.linkLossLimit = 1
        var h = inDataPhase(app, options: options)
        for _ in 0...options.linkLossLimit {
            h.feed(
                .notification(
                    cp, SecureDFUResponse.selected(maxSize: 4096, offset: 400, crc: CRC32.checksum(app.bytes)).bytes))
            h.feed(.disconnected(.remoteTerminated))
            h.feed(.connected(Boards.secureBootloader))
            if h.flow.outcome != nil { break }
            // Back on the bootloader: the stored init is executed again and receipts are set.
            let initPacket = app.secureInitPacket.bytes
            h.feed(
                .notification(
                    cp, SecureDFUResponse.selected(maxSize: 512, offset: 56, crc: CRC32.checksum(initPacket)).bytes))
            h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x04).bytes))
            h.feed(.notification(cp, SecureDFUResponse.success(opcode: 0x02).bytes))
        }
        guard case .linkLost? = h.error else {
            Issue.record("expected the link-loss limit, got \(String(describing: h.flow.outcome))"); return
        }
    }
}
