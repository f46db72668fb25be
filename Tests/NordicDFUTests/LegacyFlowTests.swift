import NordicDFUFrames
import Testing
import Transport
@testable import NordicDFU

@Suite struct LegacyFlowTests {
    let cp = NordicGATT.legacyControlPoint
    typealias H = Harness<LegacyDFUFlow>

    @Test("Start, init and firmware go out as the legacy bootloader expects")
    func canonicalStart() throws {
        let app = Boards.application(100, family: .nrf51)
        var h = H(LegacyDFUFlow(application: app))
        let start = h.feed(.start(Boards.legacyBootloader))
        #expect(H.writes(start, to: cp) == [[0x01, 0x04]])
        #expect(H.writes(start, to: NordicGATT.legacyPacket) == [LegacyImageSizes(application: 100).bytes])
        let initStep = h.feed(.notification(cp, [0x10, 0x01, 0x01]))
        #expect(H.writes(initStep, to: cp) == [[0x02, 0x00], [0x02, 0x01]])
        #expect(H.writes(initStep, to: NordicGATT.legacyPacket) == [app.legacyInitPacket.bytes])
        let data = h.feed(.notification(cp, [0x10, 0x02, 0x01]))
        #expect(H.writes(data, to: cp) == [[0x08, 0x08, 0x00], [0x03]])
        #expect(H.writes(data, to: NordicGATT.legacyPacket).allSatisfy { $0.count == 20 })
        #expect(H.writes(data, to: NordicGATT.legacyPacket).count == 5)
        let validate = h.feed(.notification(cp, [0x10, 0x03, 0x01]))
        #expect(H.writes(validate, to: cp) == [[0x04]])
        let activate = h.feed(.notification(cp, [0x10, 0x04, 0x01]))
        #expect(H.writes(activate, to: cp) == [[0x05]])
        let check = h.feed(.disconnected(.remoteTerminated))
        // After Activate the board should run its application, at the application's address.
        #expect(check.contains(.connect(after: NordicDFUOptions().reconnectDelay, to: .application)))
        #expect(h.flow.outcome == nil)
        h.feed(.connected(Boards.legacyApp))
        #expect(try h.flow.outcome?.get().verified == true)
    }

    @Test("An activation that did not take: the bootloader seen again gets Activate once more, then a fresh transfer")
    func activationLost() {
        var h = H(LegacyDFUFlow(application: Boards.application(100, family: .nrf51)))
        h.feed(.start(Boards.legacyBootloader))
        h.feed(.notification(cp, [0x10, 0x01, 0x01]))
        h.feed(.notification(cp, [0x10, 0x02, 0x01]))
        h.feed(.notification(cp, [0x10, 0x03, 0x01]))
        h.feed(.notification(cp, [0x10, 0x04, 0x01]))
        h.feed(.disconnected(.supervisionTimeout))
        let again = h.feed(.connected(Boards.legacyBootloader))
        #expect(H.writes(again, to: cp) == [[0x05]])
        let reset = h.feed(.notification(cp, [0x10, 0x05, 0x02]))
        #expect(H.writes(reset, to: cp) == [[0x06]])
        h.feed(.disconnected(.remoteTerminated))
        let fresh = h.feed(.connected(Boards.legacyBootloader))
        #expect(H.writes(fresh, to: cp) == [[0x01, 0x04]])
        #expect(h.flow.outcome == nil)
    }

    @Test("The bonding trap: a bootloader that drops every connection before answering is explained")
    func bondingTrap() {
        var h = H(LegacyDFUFlow(application: Boards.application(100, family: .nrf51)))
        h.feed(.start(Boards.legacyBootloader))
        for _ in 0..<2 {
            h.feed(.disconnected(.remoteTerminated))
            h.feed(.connected(Boards.legacyBootloader))
        }
        h.feed(.disconnected(.remoteTerminated))
        #expect(h.error == .bondingTrap(attempts: 3))
        #expect(h.error?.description.contains("bluetoothctl remove") == true)
        var encrypted = H(LegacyDFUFlow(application: Boards.application(100, family: .nrf51)))
        encrypted.feed(.start(Boards.legacyBootloader))
        encrypted.feed(.writeFailed(cp, .failed(operation: "write", message: "Insufficient Encryption")))
        #expect(encrypted.error == .bondingTrap(attempts: 1))
    }

    @Test("A receipt behind what was sent resets the bootloader and starts again; a refused init is explained")
    func receiptsAndRefusals() {
        var h = H(LegacyDFUFlow(application: Boards.application(1000, family: .nrf51)))
        h.feed(.start(Boards.legacyBootloader))
        h.feed(.notification(cp, [0x10, 0x01, 0x01]))
        h.feed(.notification(cp, [0x10, 0x02, 0x01]))
        let reset = h.feed(.notification(cp, LegacyDFUNotification.receipt(bytesReceived: 140).bytes))
        #expect(H.writes(reset, to: cp) == [[0x06]])
        h.feed(.disconnected(.remoteTerminated))
        let again = h.feed(.connected(Boards.legacyBootloader))
        #expect(H.writes(again, to: cp) == [[0x01, 0x04]])

        var refused = H(LegacyDFUFlow(application: Boards.application(1000, family: .nrf51)))
        refused.feed(.start(Boards.legacyBootloader))
        refused.feed(.notification(cp, [0x10, 0x01, 0x01]))
        refused.feed(.notification(cp, [0x10, 0x02, 0x06]))
        #expect(refused.error == .legacyRejected(step: "the init packet", opcode: 2, status: 6))
        #expect(refused.error?.description.contains("SoftDevice") == true)
    }
}

/// Where each reconnection of a legacy DFU goes: the transport resolves the target to an address.
@Suite struct LegacyReconnectTargetTests {
    typealias H = Harness<LegacyDFUFlow>

    @Test("The entry from the application reconnects to the bootloader, a failed attempt there too")
    func entryTargetsTheBootloader() {
        var h = H(LegacyDFUFlow(application: Boards.application(100, family: .nrf51)))
        let entry = h.feed(.start(Boards.legacyApp))
        #expect(H.writes(entry, to: NordicGATT.dfuControl) == [[0x01]])
        let reconnect = h.feed(.disconnected(.remoteTerminated))
        #expect(reconnect.contains(.connect(after: NordicDFUOptions().reconnectDelay, to: .bootloader)))
        let again = h.feed(.connectFailed(.connectFailed("le-connection-abort-by-local")))
        #expect(again.contains(.connect(after: NordicDFUOptions().reconnectDelay, to: .bootloader)))
    }
}
