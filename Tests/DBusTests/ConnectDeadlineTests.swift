import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// Connecting has a deadline: a socket that accepts and never answers, or answers what is not
/// D-Bus, ends in `connectionFailed` instead of blocking the caller for ever.
struct ConnectDeadlineTests {
    @Test(
        "a bus that accepts and then stays silent or sends garbage fails the connect",
        arguments: BrokenBusSocket.Behaviour.allCases)
    func brokenBusFailsTheConnect(behaviour: BrokenBusSocket.Behaviour) throws {
        let socket = try BrokenBusSocket(behaviour)
        // On a thread of its own, waited for far beyond the deadline: a hang fails the test
        // instead of stopping the suite.
        let outcome = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let address = socket.address
        Thread {
            let text: String
            do {
                _ = try DBusConnection(bus: .address(address), timeout: .milliseconds(500))
                text = "connected"
            } catch {
                text = "\(error)"
            }
            outcome.withLock { $0 = text }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 60) == .success, "the connect never returned")
        let text = try #require(outcome.withLock { $0 })
        #expect(text.hasPrefix("cannot connect to the D-Bus bus at \(address)"), "\(text)")
        if behaviour == .silent {
            #expect(text.contains("did not complete the D-Bus handshake within 0.5 s"), "\(text)")
        }
    }

    @Test(
        "a working bus still connects with a deadline",
        .enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
    func workingBusConnects() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(bus: .address(bus.address), timeout: .seconds(10))
        #expect(connection.uniqueName.hasPrefix(":"))
        connection.close()
    }
}
