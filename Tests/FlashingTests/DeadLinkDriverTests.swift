import FirmwareImage
import Flashing
import NordicDFU
import NordicDFUFrames
import Synchronization
import Testing
import Transport
import PartialFlashingFrames

/// A board that dropped the link before the flow started (as a micro:bit V1 does 0.5 s after
/// pairing): every call needs a connection and there is none, closing the link has nothing to
/// close, and the loss is told to whoever listens (`BLETransport.disconnects()`).
private final class DeadLinkTransport: BLETransport, Sendable {
    let connects = Mutex<[ConnectTarget]>([])
    let answerConnect: @Sendable (ConnectTarget) throws -> ConnectionInfo

    init(answerConnect: @escaping @Sendable (ConnectTarget) throws -> ConnectionInfo) {
        self.answerConnect = answerConnect
    }

    func connect(timeout: Duration) async throws -> ConnectionInfo {
        try await connect(to: .sameDevice, timeout: timeout)
    }
    func connect(to target: ConnectTarget, timeout: Duration) async throws -> ConnectionInfo {
        connects.withLock { $0.append(target) }
        return try answerConnect(target)
    }
    func disconnect() async {}
    func characteristics(of service: BLEUUID, timeout: Duration) async throws -> [BLEUUID] { [] }
    func write(_ bytes: [UInt8], to c: GATTCharacteristic, kind: WriteKind, timeout: Duration) async throws {
        throw TransportError.notConnected(operation: "write to \(c.characteristic)")
    }
    func read(_ c: GATTCharacteristic, timeout: Duration) async throws -> [UInt8] {
        throw TransportError.notConnected(operation: "read of \(c.characteristic)")
    }
    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> { AsyncStream { _ in } }
    func enableNotifications(_ c: GATTCharacteristic, timeout: Duration) async throws {
        throw TransportError.notConnected(operation: "enabling notifications of \(c.characteristic)")
    }
    func disconnects() -> AsyncStream<DisconnectReason> {
        let (stream, sink) = AsyncStream<DisconnectReason>.makeStream()
        sink.yield(.remoteTerminated)
        return stream
    }
    var mtu: Int { 23 }
}

/// Closes the link once it is told the link is down, and finishes at the loss that answers.
private struct CloseAfterLoss: FlowMachine {
    var losses = 0
    var outcome: Result<Int, any Error>?
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        guard case .disconnected = event else { return [] }
        losses += 1
        guard losses == 2 else { return [.disconnect] }
        outcome = .success(losses)
        return [.finish]
    }
}

@Suite struct DeadLinkDriverTests {
    static let legacyApplication = ConnectionInfo(
        services: [PartialFlashingGATT.service, NordicGATT.dfuControlService], mtu: 23,
        name: "BBC micro:bit")

    @Test(
        "closing a link the flow was told is down answers with a loss, never leaves the flow waiting",
        .timeLimit(.minutes(1)))
    func closingADeadLinkAnswers() async throws {
        let transport = DeadLinkTransport { _ in throw TransportError.connectFailed("no board") }
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        let losses = try await driver.run(CloseAfterLoss(), connection: Self.legacyApplication)
        #expect(losses == 2)
    }

    @Test(
        "entering the legacy bootloader on a link that is already down reconnects, then ends with a clear error",
        .timeLimit(.minutes(1)))
    func legacyEntryOnADeadLinkEnds() async throws {
        let transport = DeadLinkTransport { _ in throw TransportError.connectFailed("the board does not advertise") }
        let driver = AsyncFlowDriver(transport: transport, clock: InstantClock())
        let application = DFUApplication(
            family: .nrf51, start: 0x18000, bytes: (0..<400).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) })
        let options = NordicDFUOptions()
        await #expect(throws: NordicDFUError.bootloaderNotFound(attempts: options.reconnectAttempts)) {
            _ = try await driver.run(
                LegacyDFUFlow(application: application, options: options), connection: Self.legacyApplication)
        }
        // It looked for the bootloader the entry may have started, never waiting on the dead link.
        #expect(transport.connects.withLock { $0 } == Array(repeating: .bootloader, count: options.reconnectAttempts))
    }
}
