import Diagnostics
import Testing
import Synchronization
@testable import Flashing
import Transport
import PartialFlashingFrames
import SMP

/// A clock whose sleeps return at once, advancing its own time: timers fire in order, instantly.
final class InstantClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by d: Duration) -> Instant { Instant(offset: offset + d) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }
    private let current = Mutex(Duration.zero)
    var now: Instant { Instant(offset: current.withLock { $0 }) }
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        await Task.yield()
        current.withLock { $0 = max($0, deadline.offset) }
    }
}

/// A transport whose board is a closure: each write may produce notifications.
final class ScriptedTransport: BLETransport, Sendable {
    private let state = Mutex<(writes: [[UInt8]], sinks: [GATTCharacteristic: AsyncStream<[UInt8]>.Continuation])>(
        ([], [:]))
    let respond: @Sendable ([UInt8]) -> [[UInt8]]
    let disconnectStream: AsyncStream<DisconnectReason>
    let disconnectSink: AsyncStream<DisconnectReason>.Continuation

    init(respond: @escaping @Sendable ([UInt8]) -> [[UInt8]]) {
        self.respond = respond
        (disconnectStream, disconnectSink) = AsyncStream<DisconnectReason>.makeStream()
    }

    var writes: [[UInt8]] { state.withLock { $0.writes } }

    func connect(timeout: Duration) async throws -> ConnectionInfo {
        ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 23)
    }
    func disconnect() async { disconnectSink.yield(.localTerminated) }
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] { [] }
    func write(_ bytes: [UInt8], to c: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws {
        let sink = state.withLock { s -> AsyncStream<[UInt8]>.Continuation? in
            s.writes.append(bytes)
            return s.sinks[c]
        }
        for reply in respond(bytes) { sink?.yield(reply) }
    }
    func read(_ c: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] { [] }
    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> {
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream()
        state.withLock { $0.sinks[c] = sink }
        return stream
    }
    func enableNotifications(_ c: GATTCharacteristic, timeout: Duration) async throws {}
    func disconnects() -> AsyncStream<DisconnectReason> { disconnectStream }
    var mtu: Int { 23 }
}

/// Asks STATUS up to three times, with a timeout each; finishes with the mode byte.
private struct StatusFlow: FlowMachine {
    var attempts = 0
    var outcome: Result<UInt8, any Error>?
    struct GaveUp: Error {}
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start:
            return [.subscribe(PartialFlashingGATT.characteristic)] + ask()
        case let .notification(_, bytes) where bytes.count == 3 && bytes[0] == 0xEE:
            outcome = .success(bytes[2])
            return [.cancelTimer(TimerID("status")), .report(.note("mode \(bytes[2])")), .finish]
        case .timerFired(TimerID("status")):
            guard attempts < 3 else { outcome = .failure(GaveUp()); return [.finish] }
            return ask()
        default:
            return []
        }
    }
    private mutating func ask() -> [FlowAction] {
        attempts += 1
        return [
            .write(PartialFlashingGATT.characteristic, [0xEE], .command),
            .startTimer(TimerID("status"), .milliseconds(500))
        ]
    }
}

@Suite struct AsyncFlowDriverTests {
    let info = ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 23)

    @Test func deliversNotificationsAndReportsToTheMachine() async throws {
        let transport = ScriptedTransport { $0 == [0xEE] ? [[0xEE, 0x01, 0x00]] : [] }
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        let notes = Mutex<[FlowReport]>([])
        let mode = try await driver.run(StatusFlow(), connection: info) { report, _ in
            notes.withLock { $0.append(report) }
        }
        #expect(mode == 0)
        #expect(transport.writes == [[0xEE]])
        #expect(notes.withLock { $0 } == [.note("mode 0")])
    }

    @Test func firesTimersSoTheMachineCanRetryAndGiveUp() async throws {
        let transport = ScriptedTransport { _ in [] }  // the board never answers
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        await #expect(throws: StatusFlow.GaveUp.self) {
            _ = try await driver.run(StatusFlow(), connection: info)
        }
        #expect(transport.writes == [[0xEE], [0xEE], [0xEE]])
    }

    @Test func answersOnlyTheFirstOfDuplicateRepliesAfterFinishing() async throws {
        let transport = ScriptedTransport { $0 == [0xEE] ? [[0xEE, 0x01, 0x01], [0xEE, 0x01, 0x00]] : [] }
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        let mode = try await driver.run(StatusFlow(), connection: info)
        #expect(mode == 1)
    }
}

/// A transport that hands commands on without waiting, and refuses one of them later (as
/// BlueZ's reply to a `WriteValue` not waited for would).
final class PipelinedTransport: BLETransport, Sendable {
    private let log = Mutex<(enqueued: [[UInt8]], awaited: [[UInt8]], later: [@Sendable () -> Void])>(([], [], []))
    let refuse: [UInt8]
    init(refusing bytes: [UInt8]) { refuse = bytes }
    var enqueued: [[UInt8]] { log.withLock { $0.enqueued } }
    var awaited: [[UInt8]] { log.withLock { $0.awaited } }

    func enqueueCommand(
        _ bytes: [UInt8], to c: GATTCharacteristic, timeout: Duration,
        failed: @escaping @Sendable (TransportError) -> Void
    ) async throws {
        log.withLock { s in
            s.enqueued.append(bytes)
            if bytes == refuse { s.later.append { failed(.failed(operation: "write", message: "refused later")) } }
        }
    }
    /// Delivers the refusals collected so far.
    func answer() {
        for refusal in log.withLock({ s in
            defer { s.later = [] }; return s.later
        }) { refusal() }
    }

    func connect(timeout: Duration) async throws -> ConnectionInfo { ConnectionInfo(services: [], mtu: 23) }
    func disconnect() async {}
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] { [] }
    func write(_ bytes: [UInt8], to c: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws {
        log.withLock { $0.awaited.append(bytes) }
    }
    func read(_ c: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] { [] }
    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> { AsyncStream { $0.finish() } }
    func enableNotifications(_ c: GATTCharacteristic, timeout: Duration) async throws {}
    func disconnects() -> AsyncStream<DisconnectReason> { AsyncStream { _ in } }
    var mtu: Int { 23 }
}

/// Sends four commands and a request at once, then finishes with the first write failure it hears of.
private struct BlockFlow: FlowMachine {
    var outcome: Result<TransportError, any Error>?
    let transport: PipelinedTransport
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start:
            return (1...4).map { .write(PartialFlashingGATT.characteristic, [UInt8($0)], .command) }
                + [.write(SMPGATT.characteristic, [9], .request), .startTimer(TimerID("answer"), .seconds(1))]
        case .timerFired:
            // By now every write was handed over; the stack's answers come in.
            transport.answer()
            return []
        case let .writeFailed(_, error):
            outcome = .success(error)
            return [.finish]
        default:
            return []
        }
    }
}

@Suite struct PipelinedWriteTests {
    @Test(
        "commands are handed over without waiting for the stack, requests are awaited, and a later refusal arrives as writeFailed"
    )
    func commandsDoNotWait() async throws {
        let transport = PipelinedTransport(refusing: [2])
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        let error = try await driver.run(
            BlockFlow(transport: transport), connection: ConnectionInfo(services: [], mtu: 23))
        #expect(transport.enqueued == [[1], [2], [3], [4]])
        #expect(transport.awaited == [[9]])
        #expect(error == .failed(operation: "write", message: "refused later"))
    }
}

/// A transport whose stack passes on, after the first write, a value no board can send: the
/// transport drops it (the board's answer never reaches the flow) and reports the violation.
final class ViolatingTransport: StackIntegrityReporting, Sendable {
    let inner = ScriptedTransport { _ in [] }
    private let state = Mutex<(violation: String?, sinks: [AsyncStream<String>.Continuation])>((nil, []))

    var writes: [[UInt8]] { inner.writes }
    var stackViolation: String? { state.withLock { $0.violation } }
    func stackViolations() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream<String>.makeStream()
        let now = state.withLock { s -> String? in
            s.sinks.append(sink); return s.violation
        }
        if let now { sink.yield(now) }
        return stream
    }

    func connect(timeout: Duration) async throws -> ConnectionInfo { try await inner.connect(timeout: timeout) }
    func disconnect() async { await inner.disconnect() }
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] { [] }
    func write(_ bytes: [UInt8], to c: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws {
        try await inner.write(bytes, to: c, kind: kind, timeout: timeout)
        let sinks = state.withLock { s -> [AsyncStream<String>.Continuation] in
            guard s.violation == nil else { return [] }
            s.violation = "a notification of 4096 bytes"
            return s.sinks
        }
        for sink in sinks { sink.yield("a notification of 4096 bytes") }
    }
    func read(_ c: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] { [] }
    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> { inner.notifications(of: c) }
    func enableNotifications(_ c: GATTCharacteristic, timeout: Duration) async throws {}
    func disconnects() -> AsyncStream<DisconnectReason> { inner.disconnects() }
    var mtu: Int { 23 }
}

@Suite struct StackViolationDriverTests {
    let info = ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 23)

    @Test("a value the stack never sends ends the run at once with the violation, before any retry, with exit 76")
    func violationEndsTheRun() async throws {
        let transport = ViolatingTransport()
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        do {
            _ = try await driver.run(StatusFlow(), connection: info)
            Issue.record("the run went on after the violation")
        } catch let error as StackViolation {
            #expect(error.detail == "a notification of 4096 bytes")
            #expect(error.description.contains("not a radio problem"))
            #expect(FailureKind.of(error) == .stackViolation)
            #expect(error.isTransient == false)
        }
        // Without the violation the flow asks three times and gives up (see above): here, once.
        #expect(transport.writes == [[0xEE]])
    }

    @Test("a violation already seen before the run ends it before the flow writes anything")
    func violationBeforeTheRun() async throws {
        let transport = ViolatingTransport()
        try await transport.write([0], to: PartialFlashingGATT.characteristic, kind: .command, timeout: .seconds(1))
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        await #expect(throws: StackViolation.self) { _ = try await driver.run(StatusFlow(), connection: info) }
        #expect(transport.writes == [[0]])
    }
}

/// A transport whose connection attempts never succeed: each waits on the clock until its timeout.
final class SilentBoardTransport: BLETransport, Sendable {
    let clock: InstantClock
    private let attempts = Mutex(0)
    init(clock: InstantClock) { self.clock = clock }
    var connectAttempts: Int { attempts.withLock { $0 } }
    func connect(timeout: Duration) async throws -> ConnectionInfo {
        attempts.withLock { $0 += 1 }
        // Long enough that the flow's own timer comes first.
        for _ in 0..<200 { try await clock.sleep(for: timeout / 200) }
        throw TransportError.connectFailed("no advertisement within \(timeout)")
    }
    func disconnect() async {}
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] { [] }
    func write(_ bytes: [UInt8], to c: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws {}
    func read(_ c: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] { [] }
    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> { AsyncStream { $0.finish() } }
    func enableNotifications(_ c: GATTCharacteristic, timeout: Duration) async throws {}
    func disconnects() -> AsyncStream<DisconnectReason> { AsyncStream { _ in } }
    var mtu: Int { 23 }
}

/// Looks for the board for 2 s: connects, and gives up when its window timer fires first.
private struct WindowFlow: FlowMachine {
    var outcome: Result<String, any Error>?
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start:
            return [.startTimer(TimerID("window"), .seconds(2)), .connect(after: .zero)]
        case .connected:
            outcome = .success("connected")
            return [.finish]
        case .connectFailed:
            outcome = .success("attempt failed")
            return [.finish]
        case .timerFired(TimerID("window")):
            outcome = .success("window over at \(now)")
            return [.finish]
        default:
            return []
        }
    }
}

extension AsyncFlowDriverTests {
    @Test func aFlowTimerEndsAConnectionAttemptThatStillWaits() async throws {
        let clock = InstantClock()
        let transport = SilentBoardTransport(clock: clock)
        let driver = AsyncFlowDriver(transport: transport, clock: clock, operationTimeout: .seconds(20))
        let result = try await driver.run(WindowFlow(), connection: info)
        #expect(result.hasPrefix("window over"))
        #expect(transport.connectAttempts == 1)
        #expect(clock.now.offset < .seconds(20))
    }
}
