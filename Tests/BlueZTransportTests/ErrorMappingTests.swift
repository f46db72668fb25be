import DBus
import Testing
@testable import BlueZTransport
import Transport

@Suite struct ErrorMappingTests {
    private func map(_ name: String, _ message: String, _ op: String = "write to X") -> BlueZError {
        BlueZError.from(.remote(name: name, message: message), operation: op)
    }

    @Test("BlueZ's 'not connected' replies, both spellings, mean no connection")
    func notConnected() {
        #expect(map("org.bluez.Error.NotConnected", "Not Connected") == .notConnected(operation: "write to X"))
        #expect(map("org.bluez.Error.Failed", "Not connected") == .notConnected(operation: "write to X"))
        #expect(map("org.bluez.Error.NotConnected", "").transportError == .notConnected(operation: "write to X"))
    }

    @Test("authentication failures are a refused pairing with advice")
    func pairingRefused() {
        for name in [
            "AuthenticationFailed", "AuthenticationRejected", "AuthenticationCanceled", "AuthenticationTimeout"
        ] {
            let e = map("org.bluez.Error.\(name)", "Authentication Failed", "zotig")
            guard case .pairingRefused = e else { Issue.record("\(name) gave \(e)"); continue }
            #expect(e.description.hasPrefix("pairing refused"))
            #expect(e.description.contains("pairing mode"))
        }
    }

    @Test("a missing bluetoothd, an unpowered adapter and a lost bus mean Bluetooth is unavailable")
    func unavailable() {
        for e in [
            map("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided"),
            map("org.bluez.Error.NotReady", "Resource Not Ready"),
            BlueZError.from(.disconnected, operation: "x"),
            BlueZError.from(.connectionFailed(address: "unix:path=/nope", reason: "No such file"), operation: "x")
        ] {
            guard case .bluetoothUnavailable = e else { Issue.record("got \(e)"); continue }
            #expect(e.description.contains("systemctl start bluetooth"))
        }
    }

    @Test("timeouts and wrong reply types keep their meaning")
    func timeoutsAndShapes() {
        #expect(
            BlueZError.from(.timeout(method: "m", after: .seconds(3)), operation: "read of Y")
                == .timeout(operation: "read of Y", after: .seconds(3)))
        let shape = BlueZError.from(
            .typeMismatch(expected: "ay", actual: "s", context: "ReadValue"), operation: "read of Y")
        guard case .unexpectedReply = shape else { Issue.record("got \(shape)"); return }
        guard case .failed(let op, let message) = shape.transportError else {
            Issue.record("got \(shape.transportError)"); return
        }
        #expect(op == "read of Y" && message.contains("expected type 'ay'"))
    }

    @Test("other BlueZ errors keep their name and message")
    func others() {
        let e = map("org.bluez.Error.Failed", "Failed to initiate write")
        #expect(e == .failed(operation: "write to X", message: "Failed: Failed to initiate write"))
        #expect(
            e.transportError
                == .failed(operation: "write to X", message: "write to X failed: Failed: Failed to initiate write"))
    }

    @Test("InProgress and connection aborts are retried on connect; other failures are not")
    func retryableConnect() {
        #expect(
            BlueZError.isRetryableConnect(
                .remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")))
        #expect(
            BlueZError.isRetryableConnect(
                .remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")))
        #expect(
            BlueZError.isRetryableConnect(
                .remote(name: "org.bluez.Error.Failed", message: "Software caused connection abort")))
        #expect(!BlueZError.isRetryableConnect(.remote(name: "org.bluez.Error.Failed", message: "Page Timeout")))
        #expect(
            !BlueZError.isRetryableConnect(.remote(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")))
        #expect(!BlueZError.isRetryableConnect(.timeout(method: "Connect", after: .seconds(1))))
    }

    @Test("the replies of a board that wants a bond are recognised")
    func needsPairing() {
        #expect(BlueZError.needsPairing(.remote(name: "org.bluez.Error.NotPermitted", message: "Not paired")))
        #expect(
            BlueZError.needsPairing(.remote(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized"))
        )
        #expect(
            BlueZError.needsPairing(
                .remote(
                    name: "org.bluez.Error.Failed",
                    message: "Operation failed with ATT error: Insufficient Authentication (0x05)")))
        #expect(!BlueZError.needsPairing(.remote(name: "org.bluez.Error.NotPermitted", message: "Write acquired")))
        #expect(!BlueZError.needsPairing(.remote(name: "org.bluez.Error.Failed", message: "Not connected")))
    }

    @Test("connect-level failures reach the flows as connect failures with the same advice")
    func transportMapping() {
        let e = BlueZError.servicesNeverResolved(
            device: "BBC micro:bit [zotig] (F0:0D:00:00:00:01)", after: .seconds(20))
        #expect(e.description.contains("services never resolved within 20s"))
        #expect(e.description.contains("bitflash forget F0:0D:00:00:00:01"))
        #expect(e.transportError == .connectFailed(e.description))
        #expect(
            BlueZError.disconnected(operation: "w", reason: .remoteTerminated).transportError
                == .disconnected(operation: "w", reason: .remoteTerminated))
    }
}
