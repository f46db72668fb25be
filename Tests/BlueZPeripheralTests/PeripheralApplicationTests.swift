import BlueZPeripheral
import DBus
import FirmwareImage
import Foundation
import SampleFirmware
import SMP
import SimulatedBoard
import Synchronization
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// The simulated peripheral on a private bus, with the test playing bluetoothd's side of
/// `GattManager1`, `LEAdvertisingManager1` and `Device1` as `src/gatt-database.c` and
/// `src/advertising.c` use them.
@Suite(
    .enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)), .serialized,
    .timeLimit(.minutes(2)))
struct PeripheralApplicationTests {
    static let adapter = "/org/bluez/hci1"
    static let central = "/org/bluez/hci1/dev_00_AA_01_00_00_01"

    /// A minimal bluetoothd: the adapter with its managers, and one connected central.
    final class BlueZSide: Sendable {
        let bus: PrivateBus
        let connection: DBusConnection
        let server: DBusObjectServer
        /// `METHOD PATH` of every call the peripheral made, in order.
        let log = CallLog()

        init() async throws {
            bus = try PrivateBus()
            connection = try DBusConnection(bus: .address(bus.address))
            server = try DBusObjectServer(connection: connection)
            let calls = log
            try server.add(
                path: PeripheralApplicationTests.adapter,
                interfaces: [
                    "org.bluez.Adapter1": ["Address": .string("00:AA:01:01:00:01"), "Powered": .bool(true)],
                    "org.bluez.GattManager1": [:], "org.bluez.LEAdvertisingManager1": [:]
                ],
                methods: { call in
                    try call.expectSignature(call.member.hasPrefix("Register") ? "oa{sv}" : "o")
                    calls.append("\(call.member) \(try! call.arguments[0].objectPath())")
                    return []
                })
            let server = self.server
            try server.add(
                path: PeripheralApplicationTests.central,
                interfaces: [
                    "org.bluez.Device1": ["Connected": .bool(true), "Address": .string("00:AA:01:00:00:01")]
                ],
                methods: { call in
                    calls.append("\(call.member) \(call.path)")
                    try server.setProperties(
                        path: call.path, interface: "org.bluez.Device1", ["Connected": .bool(false)])
                    return []
                })
            try await connection.requestName("org.bluez")
        }

        /// The calls made once there are `count` of them (the suite's time limit bounds the wait).
        func calls(count: Int) async throws -> [String] {
            await log.lines(count: count)
        }

        func call(_ peer: String, _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [])
            async throws -> [DBusValue]
        {
            try await connection.call(
                destination: peer, path: path, interface: interface, method: method,
                arguments: arguments, timeout: .seconds(20))
        }
    }

    /// The calls in order, and the waits for a number of them, each woken by the call that makes it.
    final class CallLog: Sendable {
        private struct State {
            var lines: [String] = []
            var waiting: [(count: Int, continuation: CheckedContinuation<[String], Never>)] = []
        }
        private let state = Mutex(State())

        func append(_ line: String) {
            let woken = state.withLock { s in
                s.lines.append(line)
                let count = s.lines.count
                let ready = s.waiting.filter { $0.count <= count }.map(\.continuation)
                s.waiting.removeAll { $0.count <= count }
                return (ready, s.lines)
            }
            for continuation in woken.0 { continuation.resume(returning: woken.1) }
        }

        /// The lines once there are at least `count`.
        func lines(count: Int) async -> [String] {
            await withCheckedContinuation { continuation in
                let now = state.withLock { s -> [String]? in
                    if s.lines.count >= count { return s.lines }
                    s.waiting.append((count, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        }
    }

    static func board() throws -> SimulatedBoard {
        let image = SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart)
        let profile = BoardProfile(
            board: .microbitV2, address: "F0:0D:00:00:00:01", services: [.partialFlashing, .smp],
            bluetoothInApplicationMode: true, attMTU: 247, dataLength: 251)
        return try SimulatedBoard(profile: profile, image: image)
    }

    static func start(
        _ bluez: BlueZSide, board: SimulatedBoard, notes: AsyncStream<String>.Continuation? = nil
    ) async throws -> SimulatedPeripheral {
        var options = PeripheralOptions()
        options.timeScale = 0
        options.name = "BBC micro:bit [sim]"
        if let notes { options.onNote = { notes.yield($0) } }
        return try await SimulatedPeripheral.start(bus: .address(bluez.bus.address), board: board, options: options)
    }

    @Test("registers a GATT application whose tree BlueZ reads with GetManagedObjects, and a connectable advertisement")
    func applicationTreeAndAdvertisement() async throws {
        let bluez = try await BlueZSide()
        let peripheral = try await Self.start(bluez, board: try Self.board())
        let app = "/org/bitflash/peripheral"
        #expect(
            try await bluez.calls(count: 2) == [
                "RegisterApplication \(app)", "RegisterAdvertisement \(app)/advertisement0"
            ])
        #expect(peripheral.adapterAddress == "00:AA:01:01:00:01")

        let me = peripheral.connection.uniqueName
        let objects = try await bluez.call(me, app, DBusStandard.objectManager, "GetManagedObjects").argument(0)
            .managedObjects()
        let services = objects.compactMapValues { $0["org.bluez.GattService1"] }
        let characteristics = objects.compactMapValues { $0["org.bluez.GattCharacteristic1"] }
        #expect(
            Set(try services.values.map { try #require($0["UUID"]).string() })
                == [PartialFlashingGATT.service.uuidString, SMPGATT.service.uuidString])
        #expect(characteristics.count == 2)
        for (path, c) in characteristics {
            let service = try #require(c["Service"]).objectPath()
            #expect(services[service] != nil && path.hasPrefix(service + "/"))
            let flags = try #require(c["Flags"]).strings()
            #expect(flags.contains("write-without-response") && flags.contains("notify"))
            // BlueZ may ask for sockets (AcquireWrite, AcquireNotify) for both.
            #expect(c["WriteAcquired"] == .bool(false) && c["NotifyAcquired"] == .bool(false))
        }
        let ad = try await bluez.call(
            me, "\(app)/advertisement0", DBusStandard.properties, "GetAll",
            [.string("org.bluez.LEAdvertisement1")]
        ).argument(0).properties()
        #expect(ad["Type"] == .string("peripheral"))
        // As the boards advertise: the name only, discoverable, no service UUIDs.
        #expect(ad["ServiceUUIDs"] == nil)
        #expect(ad["LocalName"] == .string("BBC micro:bit [sim]"))
        #expect(ad["Discoverable"] == .bool(true))
        _ = await peripheral.stop()
        #expect(
            try await bluez.calls(count: 4).suffix(2) == [
                "UnregisterAdvertisement \(app)/advertisement0", "UnregisterApplication \(app)"
            ])
    }

    @Test(
        "a WriteValue reaches the board and its answer comes back as PropertiesChanged(Value); a reset disconnects the central and re-advertises"
    )
    func writeNotificationAndReset() async throws {
        let bluez = try await BlueZSide()
        let board = try Self.board()
        let peripheral = try await Self.start(bluez, board: board)
        let me = peripheral.connection.uniqueName
        let pf = try #require(peripheral.application.characteristic(for: PartialFlashingGATT.characteristic)).path
        let values = try await bluez.connection.signals(
            matching: .propertiesChanged(sender: me, path: pf, interface: "org.bluez.GattCharacteristic1"))
        _ = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "StartNotify")
        let options: DBusValue = .propertyMap([
            "type": .string("command"), "device": .objectPath(Self.central), "mtu": .uint16(517)
        ])
        // REGION_INFO for region 1 (the runtime): the board answers with its start, end and hash.
        _ = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0x00, 0x01]), options])
        var answer: [UInt8]?
        for await signal in values {
            let changed = try signal.arguments.argument(1).properties()
            if case .bytes(let bytes)? = changed["Value"] { answer = bytes; break }
        }
        let region = board.memoryMap[1]
        let bytes = try #require(answer)
        #expect(Array(bytes.prefix(2)) == [0x00, 0x01])
        #expect(bytes.count == 18)
        #expect(Array(bytes[2..<6]) == withUnsafeBytes(of: region.start.bigEndian, Array.init))
        #expect(Array(bytes[10..<18]) == region.hash)
        #expect(peripheral.counters.mtu == 517)

        // FF 01: reset now. The board drops the link and comes back (at once with time scale 0).
        _ = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes([0xFF, 0x01]), options])
        let calls = try await bluez.calls(count: 5)
        #expect(
            Array(calls.suffix(3)) == [
                "UnregisterAdvertisement /org/bitflash/peripheral/advertisement0",
                "Disconnect \(Self.central)", "RegisterAdvertisement /org/bitflash/peripheral/advertisement0"
            ])
        let final = await peripheral.stop()
        #expect(final.device.bootCount == board.device.bootCount + 1)
        #expect(peripheral.counters.resets == 1)
    }

    @Test(
        "an SMP frame written in pieces of 512 bytes (BlueZ's largest write) is reassembled and answered in notifications"
    )
    func smpFrameInPieces() async throws {
        let bluez = try await BlueZSide()
        let peripheral = try await Self.start(bluez, board: try Self.board())
        let me = peripheral.connection.uniqueName
        let smp = try #require(peripheral.application.characteristic(for: SMPGATT.characteristic)).path
        let values = try await bluez.connection.signals(
            matching: .propertiesChanged(sender: me, path: smp, interface: "org.bluez.GattCharacteristic1"))
        _ = try await bluez.call(me, smp, "org.bluez.GattCharacteristic1", "StartNotify")
        let text = String(repeating: "0123456789", count: 200)
        let frame = try SMPFrame(request: EchoRequest(text: text), sequence: 3).encoded()
        #expect(frame.count > 1024)
        let options: DBusValue = .propertyMap(["type": .string("command"), "mtu": .uint16(517)])
        for start in stride(from: 0, to: frame.count, by: 512) {
            let piece = Array(frame[start..<min(frame.count, start + 512)])
            _ = try await bluez.call(me, smp, "org.bluez.GattCharacteristic1", "WriteValue", [.bytes(piece), options])
        }
        var answer: [UInt8] = []
        for await signal in values {
            guard case .bytes(let bytes)? = try signal.arguments.argument(1).properties()["Value"] else { continue }
            answer += bytes
            if answer.count >= SMPHeader.size, answer.count >= SMPHeader.size + (Int(answer[2]) << 8 | Int(answer[3])) {
                break
            }
        }
        let response = try SMPFrame(bytes: answer)
        #expect(response.header.sequence == 3)
        #expect(try response.response(as: EchoResponse.self).text == text)
        _ = await peripheral.stop()
    }

    @Test(
        "bluetoothd's AcquireWrite and AcquireNotify get sockets: a write datagram reaches the board, its answer comes back as a datagram, no signal",
        .timeLimit(.minutes(2))
    )
    func sockets() async throws {
        let bluez = try await BlueZSide()
        let board = try Self.board()
        let (notes, noteSink) = AsyncStream<String>.makeStream()
        let peripheral = try await Self.start(bluez, board: board, notes: noteSink)
        let me = peripheral.connection.uniqueName
        let pf = try #require(peripheral.application.characteristic(for: PartialFlashingGATT.characteristic)).path
        let options: DBusValue = .propertyMap([
            "device": .objectPath(Self.central), "link": .string("LE"), "mtu": .uint16(247)
        ])
        let notifyReply = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "AcquireNotify", [options])
        let writeReply = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "AcquireWrite", [options])
        #expect(writeReply.signature == "hq" && notifyReply.signature == "hq")
        #expect(try writeReply.argument(1).uint16() == 247)
        let notifications = try PacketSocket(try notifyReply.argument(0).unixFD())
        let writes = try PacketSocket(try writeReply.argument(0).unixFD())
        var incoming = notifications.datagrams().makeAsyncIterator()
        // REGION_INFO for regions 1 and 0, back to back: answered in order.
        try await writes.send([0x00, 0x01], timeout: .seconds(2))
        try await writes.send([0x00, 0x00], timeout: .seconds(2))
        let first = try #require(await incoming.next())
        let second = try #require(await incoming.next())
        #expect(Array(first.prefix(2)) == [0x00, 0x01] && Array(second.prefix(2)) == [0x00, 0x00])
        #expect(Array(first[10..<18]) == board.memoryMap[1].hash)
        let counters = peripheral.counters
        #expect(counters.socketWrites == 2 && counters.socketNotifications == 2 && counters.writes == 2)
        #expect(counters.acquiredWrites == 1 && counters.acquiredNotifies == 1 && counters.mtu == 247)
        // bluetoothd closing its end (no subscriber left) releases the socket: answers go back to
        // signals. The peripheral says when it has seen the socket close; the next answer is a signal.
        let values = try await bluez.connection.signals(
            matching: .propertiesChanged(sender: me, path: pf, interface: "org.bluez.GattCharacteristic1"))
        notifications.close()
        var closed = false
        for await note in notes where note.hasPrefix("BlueZ closed the notify socket") {
            closed = true
            break
        }
        #expect(closed)
        try await writes.send([0x00, 0x02], timeout: .seconds(2))
        var signalled = false
        for await signal in values where signal.arguments.count > 1 {
            signalled = true
            break
        }
        #expect(signalled)
        writes.close()
        _ = await peripheral.stop()
    }

    @Test("with acquireSockets off, the characteristics offer no sockets and refuse the methods")
    func noSockets() async throws {
        let bluez = try await BlueZSide()
        var options = PeripheralOptions()
        options.timeScale = 0
        options.acquireSockets = false
        let peripheral = try await SimulatedPeripheral.start(
            bus: .address(bluez.bus.address), board: try Self.board(), options: options)
        let me = peripheral.connection.uniqueName
        let pf = try #require(peripheral.application.characteristic(for: PartialFlashingGATT.characteristic)).path
        let props = try await bluez.call(
            me, pf, DBusStandard.properties, "GetAll", [.string("org.bluez.GattCharacteristic1")]
        )
        .argument(0).properties()
        #expect(props["WriteAcquired"] == nil && props["NotifyAcquired"] == nil)
        await #expect(throws: DBusError.self) {
            _ = try await bluez.call(me, pf, "org.bluez.GattCharacteristic1", "AcquireWrite", [.propertyMap([:])])
        }
        _ = await peripheral.stop()
    }

    @Test("an adapter BlueZ does not have is refused with the adapters it has")
    func unknownAdapter() async throws {
        let bluez = try await BlueZSide()
        var options = PeripheralOptions()
        options.adapterName = "hci7"
        await #expect {
            _ = try await SimulatedPeripheral.start(
                bus: .address(bluez.bus.address), board: try Self.board(), options: options)
        } throws: { error in
            "\(error)".contains("no adapter hci7") && "\(error)".contains("hci1")
        }
    }
}
