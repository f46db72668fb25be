import DBus
import Foundation
import Testing
import TestSupport

/// Unix file descriptors (`h`) through a real bus, and the SEQPACKET sockets BlueZ passes
/// that way (`AcquireWrite`, `AcquireNotify`).
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct FileDescriptorTests {
    let pair: BusPair
    /// The server's ends of the socket pairs it handed out, kept alive for the test.
    let kept = Kept()

    final class Kept: @unchecked Sendable {
        private let lock = NSLock()
        private var sockets: [PacketSocket] = []
        private var counted: [UInt32] = []
        func add(_ s: PacketSocket) { lock.withLock { sockets.append(s) } }
        func count(_ n: UInt32) { lock.withLock { counted.append(n) } }
        var arrivals: [UInt32] { lock.withLock { counted } }
        var first: PacketSocket? { lock.withLock { sockets.first } }
    }

    init() throws {
        pair = try BusPair()
        let kept = self.kept
        try pair.server.export(path: "/test/socket") { call in
            switch call.member {
            case "Acquire":
                // As BlueZ's AcquireWrite answers: (h fd, q mtu).
                let (mine, theirs) = try PacketSocket.pair()
                kept.add(mine)
                return [.unixFD(theirs), .uint16(23)]
            case "Count":
                let n = try call.arguments.argument(0).uint32()
                kept.count(n)
                return [.uint32(n)]
            default:
                return call.arguments
            }
        }
    }

    func call(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: "/test/socket",
            interface: "org.example.Socket", method: method, arguments: arguments)
    }

    @Test("a socket passed in a reply carries datagrams both ways, one per send, and reads EOF when closed")
    func socketInReply() async throws {
        let reply = try await call("Acquire")
        #expect(reply.signature == "hq")
        let client = try PacketSocket(try reply.argument(0).unixFD())
        let server = try #require(kept.first)
        var fromClient = server.datagrams().makeAsyncIterator()
        try await client.send([1, 2, 3], timeout: .seconds(1))
        try await client.send([], timeout: .seconds(1))
        try await client.send(Array(repeating: 7, count: 20), timeout: .seconds(1))
        #expect(await fromClient.next() == [1, 2, 3])
        #expect(await fromClient.next() == [])
        #expect(await fromClient.next() == Array(repeating: 7, count: 20))

        var fromServer = client.datagrams().makeAsyncIterator()
        try server.trySend([0x01, 0xFF])
        #expect(await fromServer.next() == [0x01, 0xFF])
        server.close()
        #expect(await fromServer.next() == nil)
        #expect(throws: PacketSocket.Failure.closed) { try client.trySend([1]) }
    }

    @Test("a descriptor sent as an argument arrives as another descriptor of the same socket")
    func descriptorAsArgument() async throws {
        let (mine, theirs) = try PacketSocket.pair()
        let back = try await call("Echo", [.unixFD(theirs), .string("x")])
        #expect(back.signature == "hs")
        let echoed = try back.argument(0).unixFD()
        #expect(echoed != theirs)
        #expect(echoed.rawValue != theirs.rawValue)
        // Our copy stays ours: closing the echoed one leaves the original working.
        echoed.close()
        let other = try PacketSocket(theirs)
        var incoming = other.datagrams().makeAsyncIterator()
        try mine.trySend([9])
        #expect(await incoming.next() == [9])
    }

    @Test("a closed descriptor is refused before anything is sent")
    func closedDescriptorRefused() async throws {
        let (_, theirs) = try PacketSocket.pair()
        theirs.close()
        await #expect(throws: DBusError.self) { try await call("Echo", [.unixFD(theirs)]) }
        #expect(pair.client.pendingCallCount == 0)
    }

    @Test("calls sent without waiting leave in order, and each handle gets its own reply")
    func pipelinedCallsKeepOrder() async throws {
        let handles = try (0..<50).map { n in
            try pair.client.send(
                destination: pair.server.uniqueName, path: "/test/socket", interface: "org.example.Socket",
                method: "Count", arguments: [.uint32(UInt32(n))])
        }
        var answers: [UInt32] = []
        for handle in handles.reversed() { answers.append(try await handle.reply().argument(0).uint32()) }
        #expect(answers == (0..<50).reversed().map(UInt32.init))
        #expect(kept.arrivals == (0..<50).map(UInt32.init))
        #expect(handles.allSatisfy { $0.isDone })
        let failing = try pair.client.send(
            destination: pair.server.uniqueName, path: "/test/nothing",
            interface: "org.example.Socket", method: "Count")
        await #expect(throws: DBusError.self) { try await failing.reply() }
    }
}
