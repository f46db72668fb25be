import DBus
import Testing
import TestSupport

/// Method calls between two connections of one process, through a private bus.
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct CallTests {
    let pair: BusPair
    let gate = Gate()
    let arrivals: AsyncStream<String>
    let arrived: AsyncStream<String>.Continuation

    init() throws {
        pair = try BusPair()
        (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
        let gate = self.gate
        let arrived = self.arrived
        try pair.server.export(path: "/test/calc") { call in
            arrived.yield(call.member)
            switch call.member {
            case "Add":
                try call.expectSignature("uu")
                let a = try call.arguments.argument(0).uint32()
                let b = try call.arguments.argument(1).uint32()
                return [.uint32(a &+ b)]
            case "Busy":
                throw DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
            case "Crash":
                struct Oops: Error {}
                throw Oops()
            case "Hang":
                await gate.wait()
                return []
            default:
                throw DBusError(name: DBusErrorName.unknownMethod.rawValue, message: "no \(call.member)")
            }
        }
    }

    func call(_ method: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(10)) async throws
        -> [DBusValue]
    {
        try await pair.client.call(
            destination: pair.server.uniqueName, path: "/test/calc",
            interface: "org.example.Calc", method: method, arguments: arguments, timeout: timeout)
    }

    @Test func callsMethodExportedByAnotherConnection() async throws {
        #expect(try await call("Add", [.uint32(40), .uint32(2)]) == [.uint32(42)])
    }

    @Test func reachesObjectByWellKnownName() async throws {
        try await pair.server.requestName("org.example.Calc")
        #expect(try await pair.client.nameOwner("org.example.Calc") == pair.server.uniqueName)
        let reply = try await pair.client.call(
            destination: "org.example.Calc", path: "/test/calc",
            interface: "org.example.Calc", method: "Add",
            arguments: [.uint32(1), .uint32(2)])
        #expect(reply == [.uint32(3)])
        await #expect(throws: DBusError.nameNotAcquired(name: "org.example.Calc", reply: 3)) {
            try await pair.client.requestName("org.example.Calc")
        }
    }

    @Test func mapsErrorReplyToDBusErrorWithNameAndMessage() async throws {
        do {
            _ = try await call("Busy")
            Issue.record("expected an error reply")
        } catch let error as DBusError {
            #expect(error == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
            #expect(error.hasName(.bluezInProgress))
            #expect(!error.hasName(.bluezFailed))
        }
    }

    @Test func sendsOtherHandlerErrorsAsFailed() async throws {
        let error = await #expect(throws: DBusError.self) { try await call("Crash") }
        #expect(error?.hasName(.failed) == true)
    }

    @Test func rejectsWrongArgumentsWithInvalidArgs() async throws {
        let error = await #expect(throws: DBusError.self) { try await call("Add", [.string("x")]) }
        #expect(error?.hasName(.invalidArgs) == true)
    }

    @Test func reportsUnknownObjectAndUnknownService() async throws {
        let noObject = await #expect(throws: DBusError.self) {
            try await pair.client.call(
                destination: pair.server.uniqueName, path: "/nothing/here",
                interface: "org.example.Calc", method: "Add")
        }
        #expect(noObject?.hasName(.unknownObject) == true)
        let noService = await #expect(throws: DBusError.self) {
            try await pair.client.call(
                destination: "org.example.Nobody", path: "/", interface: "org.example.X", method: "Y")
        }
        #expect(noService?.hasName(.serviceUnknown) == true)
    }

    @Test func timesOutNamingTheMethod() async throws {
        defer { gate.open() }
        let error = await #expect(throws: DBusError.self) { try await call("Hang", timeout: .milliseconds(300)) }
        guard case .timeout(let method, let after)? = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
        #expect(method.contains("org.example.Calc.Hang"))
        #expect(after == .milliseconds(300))
        #expect(pair.client.pendingCallCount == 0)
    }

    @Test func cancellingTheTaskCancelsThePendingCall() async throws {
        defer { gate.open() }
        let task = Task { try await call("Hang", timeout: .seconds(120)) }
        for await member in arrivals where member == "Hang" { break }  // the call is on the server now
        #expect(pair.client.pendingCallCount == 1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(pair.client.pendingCallCount == 0)
    }

    @Test func failsWaitingCallsWhenTheConnectionCloses() async throws {
        defer { gate.open() }
        let task = Task { try await call("Hang", timeout: .seconds(120)) }
        for await member in arrivals where member == "Hang" { break }
        pair.client.close()
        let result = await task.result
        #expect(throws: DBusError.disconnected) { try result.get() }
        await #expect(throws: DBusError.disconnected) { try await call("Add", [.uint32(1), .uint32(1)]) }
        #expect(!pair.client.isOpen)
    }

    @Test func thousandConcurrentCallsLeaveNoPendingCalls() async throws {
        let sums = try await withThrowingTaskGroup(of: (UInt32, [DBusValue]).self) { group in
            for i in UInt32(0)..<1000 {
                group.addTask { (i, try await call("Add", [.uint32(i), .uint32(i)])) }
            }
            var results: [UInt32: [DBusValue]] = [:]
            for try await (i, reply) in group { results[i] = reply }
            return results
        }
        #expect(sums.count == 1000)
        #expect(sums.allSatisfy { $0.value == [.uint32($0.key * 2)] })
        #expect(pair.client.pendingCallCount == 0)
        #expect(pair.server.pendingCallCount == 0)
    }
}
