import DBus
import FakeBlueZ
import Foundation
import Testing
import TestSupport
import Transport

/// `AcquireWrite` and `AcquireNotify` of the fake, as BlueZ 5.66 answers them
/// (FakeBlueZ+Acquire.swift cites `src/gatt-client.c`).
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct AcquireTests {
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let noOptions: DBusValue = .propertyMap([:])

    /// A fixture with one connected board; returns it, the partial-flashing characteristic and the Service Changed one.
    static func connected(_ configure: (inout FakeBoardBehaviour) -> Void = { _ in }) async throws -> (
        FakeBus, String, String
    ) {
        var behaviour = FakeBoardBehaviour()
        configure(&behaviour)
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit(), behaviour: behaviour)])
        let device = try #require(try await fixture.discover().keys.first)
        let chars = try await fixture.connectAndResolve(device)
        return (
            fixture, try #require(chars[TestBoards.pfCharacteristic]),
            try #require(chars["00002a05-0000-1000-8000-00805f9b34fb"])
        )
    }

    static func failure(_ body: () async throws -> Void) async -> DBusError? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            return nil
        }
    }

    /// Calls an Acquire method; returns the socket and the MTU.
    static func acquire(_ fixture: FakeBus, _ path: String, _ method: String) async throws -> (PacketSocket, UInt16) {
        let reply = try await fixture.call(path, characteristic, method, [noOptions])
        #expect(reply.signature == "hq")
        return (try PacketSocket(try reply.argument(0).unixFD()), try reply.argument(1).uint16())
    }

    @Test(
        "Notifications come as datagrams on the AcquireNotify socket and writes go as datagrams on the AcquireWrite socket, without PropertiesChanged"
    )
    func socketsCarryTheTraffic() async throws {
        let (fixture, pf, _) = try await Self.connected()
        let values = try await fixture.signals(
            .propertiesChanged(sender: "org.bluez", path: pf, interface: Self.characteristic))
        let (notify, notifyMTU) = try await Self.acquire(fixture, pf, "AcquireNotify")
        #expect(notifyMTU == 23)
        let acquiredNotify = try await values.next { $0.changed["NotifyAcquired"] != nil }
        #expect(try acquiredNotify.changed["NotifyAcquired"]?.bool() == true)
        let (write, mtu) = try await Self.acquire(fixture, pf, "AcquireWrite")
        #expect(mtu == 23)

        var incoming = notify.datagrams().makeAsyncIterator()
        try await write.send([0xEE], timeout: .seconds(1))
        #expect(await incoming.next() == [0xEE, 0x01, 0x01])
        // Several STATUS requests back to back, one datagram each, answered in order.
        for _ in 0..<3 { try await write.send([0xEE], timeout: .seconds(1)) }
        for _ in 0..<3 { #expect(await incoming.next() == [0xEE, 0x01, 0x01]) }
        // No Value change went over the bus: the next signal on the characteristic is the release.
        write.close()
        _ = try await values.next { $0.changed["WriteAcquired"] != nil }  // the grant
        let released = try await values.next { $0.changed["WriteAcquired"] != nil || $0.changed["Value"] != nil }
        #expect(try released.changed["WriteAcquired"]?.bool() == false)
        #expect(released.changed["Value"] == nil)
        _ = await fixture.stop()
    }

    @Test(
        "While a socket is held, WriteValue and StartNotify are NotPermitted; AcquireNotify is InProgress beside a StartNotify session; StopNotify closes the socket"
    )
    func locks() async throws {
        let (fixture, pf, serviceChanged) = try await Self.connected()
        let (write, _) = try await Self.acquire(fixture, pf, "AcquireWrite")
        let again = await Self.failure { _ = try await Self.acquire(fixture, pf, "AcquireWrite") }
        #expect(again == DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired"))
        let writeValue = await Self.failure {
            try await fixture.call(
                pf, Self.characteristic, "WriteValue", [.bytes([0xEE]), .propertyMap(["type": .string("command")])])
        }
        #expect(writeValue == DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired"))

        try await fixture.call(pf, Self.characteristic, "StartNotify")
        let busy = await Self.failure { _ = try await Self.acquire(fixture, pf, "AcquireNotify") }
        #expect(busy?.name == "org.bluez.Error.InProgress")
        try await fixture.call(pf, Self.characteristic, "StopNotify")
        let (notify, _) = try await Self.acquire(fixture, pf, "AcquireNotify")
        let start = await Self.failure { try await fixture.call(pf, Self.characteristic, "StartNotify") }
        #expect(start == DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired"))
        var incoming = notify.datagrams().makeAsyncIterator()
        try await fixture.call(pf, Self.characteristic, "StopNotify")
        #expect(await incoming.next() == nil)

        // Service Changed is indicate-only: neither method applies (5.66 refuses indications).
        let indicateOnly = await Self.failure { _ = try await Self.acquire(fixture, serviceChanged, "AcquireNotify") }
        #expect(indicateOnly?.name == "org.bluez.Error.NotSupported")
        let noWriteCommand = await Self.failure { _ = try await Self.acquire(fixture, serviceChanged, "AcquireWrite") }
        #expect(noWriteCommand?.name == "org.bluez.Error.NotSupported")
        write.close()
        _ = await fixture.stop()
    }

    @Test("The link dropping closes both sockets (the client reads EOF); calls without a link fail 'Not connected'")
    func linkLossClosesSockets() async throws {
        let (fixture, pf, _) = try await Self.connected { $0.gattCache = true }
        let (write, _) = try await Self.acquire(fixture, pf, "AcquireWrite")
        let (notify, _) = try await Self.acquire(fixture, pf, "AcquireNotify")
        var fromWrite = write.datagrams().makeAsyncIterator()
        var fromNotify = notify.datagrams().makeAsyncIterator()
        try await fixture.call(TestBoards.devicePath("F0:0D:00:00:00:01"), "org.bluez.Device1", "Disconnect")
        #expect(await fromWrite.next() == nil)
        #expect(await fromNotify.next() == nil)
        #expect(throws: PacketSocket.Failure.closed) { try write.trySend([0xEE]) }
        let later = await Self.failure { _ = try await Self.acquire(fixture, pf, "AcquireWrite") }
        #expect(later == DBusError(name: "org.bluez.Error.Failed", message: "Not connected"))
        _ = await fixture.stop()
    }

    @Test("A BlueZ without the methods answers UnknownMethod; the scenario can close granted sockets after some writes")
    func refusalsAndClosures() async throws {
        let (refusing, pf, _) = try await Self.connected { $0.refusesAcquire = true }
        let unknown = await Self.failure { _ = try await Self.acquire(refusing, pf, "AcquireWrite") }
        #expect(unknown?.hasName(.unknownMethod) == true)
        let unknownNotify = await Self.failure { _ = try await Self.acquire(refusing, pf, "AcquireNotify") }
        #expect(unknownNotify?.hasName(.unknownMethod) == true)
        _ = await refusing.stop()

        let (closing, pf2, _) = try await Self.connected { $0.acquiredSocketsCloseAfter = 2 }
        let (write, _) = try await Self.acquire(closing, pf2, "AcquireWrite")
        let (notify, _) = try await Self.acquire(closing, pf2, "AcquireNotify")
        var incoming = notify.datagrams().makeAsyncIterator()
        try await write.send([0xEE], timeout: .seconds(1))
        #expect(await incoming.next() == [0xEE, 0x01, 0x01])
        // The sockets close after the second write, before its answer leaves the board.
        try await write.send([0xEE], timeout: .seconds(1))
        #expect(await incoming.next() == nil)
        // The link is still up: WriteValue works again.
        try await closing.call(
            pf2, Self.characteristic, "WriteValue", [.bytes([0xEE]), .propertyMap(["type": .string("command")])])
        _ = await closing.stop()
    }
}
