import BlueZTransport
import DBus
import Foundation
import Testing
import TestSupport
import Transport
import PartialFlashingFrames

/// The transport's two paths to a board: the sockets of `AcquireWrite`/`AcquireNotify` where
/// BlueZ grants them, `WriteValue` (not waited for) and `PropertiesChanged` where it does not,
/// and the change from one to the other when the sockets close. Against `bitflash-lab sim bluez`.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct AcquireTransportTests {
    static let pf = PartialFlashingGATT.characteristic

    /// A connected transport to the fake's board, with its notification stream.
    static func connect(_ fake: FakeBlueZProcess) async throws -> (BlueZDeviceTransport, AsyncStream<[UInt8]>.Iterator)
    {
        let bus = try await BlueZBus.open(bus: .address(fake.bus.address))
        let found = try await BlueZScanner(bus: bus).find(DeviceQuery(FakeBlueZProcess.address), timeout: .seconds(10))
        let transport = try await BlueZDeviceTransport.open(device: found, on: bus)
        let stream = transport.notifications(of: pf)
        _ = try await transport.connect(timeout: .seconds(20))
        try await transport.enableNotifications(pf, timeout: .seconds(10))
        return (transport, stream.makeAsyncIterator())
    }

    /// REGION_INFO for regions 0, 1 and 2, sent back to back without waiting: the answers
    /// name the regions in the order asked (partial-flashing-protocol.md §2.1).
    static func askRegions(_ transport: BlueZDeviceTransport, _ answers: inout AsyncStream<[UInt8]>.Iterator)
        async throws -> [UInt8]
    {
        let failures = FailureLog()
        for region: UInt8 in 0...2 {
            try await transport.enqueueCommand([0x00, region], to: pf, timeout: .seconds(10)) { failures.add($0) }
        }
        var regions: [UInt8] = []
        while regions.count < 3, let answer = await answers.next() {
            if answer.first == 0x00, answer.count > 1 { regions.append(answer[1]) }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        return regions
    }

    final class FailureLog: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [TransportError] = []
        private let (reported, sink) = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)
        func add(_ e: TransportError) {
            lock.withLock { errors.append(e) }
            sink.yield()
        }
        var all: [TransportError] { lock.withLock { errors } }
        /// Returns once a failure has been reported.
        func first() async {
            var reports = reported.makeAsyncIterator()
            _ = await reports.next()
        }
    }

    @Test("where BlueZ grants the sockets, writes and notifications go through them, in order")
    func socketsWhereGranted() async throws {
        let fake = try FakeBlueZProcess()
        let (transport, answers) = try await Self.connect(fake)
        var iterator = answers
        #expect(try await Self.askRegions(transport, &iterator) == [0, 1, 2])
        let counts = transport.pathCounts
        #expect(counts.acquiredWrite == 1 && counts.acquiredNotify == 1, "\(counts)")
        #expect(counts.socketWrites == 3 && counts.valueWrites == 0, "\(counts)")
        #expect(counts.socketNotifications == 3, "\(counts)")
        #expect(counts.fallbacks.isEmpty, "\(counts.fallbacks)")
        await transport.disconnect()
        transport.close()
    }

    @Test(
        "a BlueZ without AcquireWrite/AcquireNotify gets WriteValue calls sent back to back, answered as PropertiesChanged, in order"
    )
    func valueWritesWhereRefused() async throws {
        let fake = try FakeBlueZProcess(["--refuses-acquire"])
        let (transport, answers) = try await Self.connect(fake)
        var iterator = answers
        #expect(try await Self.askRegions(transport, &iterator) == [0, 1, 2])
        let counts = transport.pathCounts
        #expect(counts.acquiredWrite == 0 && counts.acquiredNotify == 0, "\(counts)")
        #expect(counts.valueWrites == 3 && counts.socketWrites == 0 && counts.socketNotifications == 0, "\(counts)")
        // The first refusal (AcquireNotify, at subscription) says BlueZ has no such methods:
        // neither is asked for again, on this link or the next.
        #expect(counts.fallbacks.count == 1 && counts.fallbacks[0].contains("AcquireNotify"), "\(counts.fallbacks)")
        await transport.disconnect()
        _ = try await transport.connect(timeout: .seconds(20))
        try await transport.enableNotifications(Self.pf, timeout: .seconds(10))
        #expect(try await Self.askRegions(transport, &iterator) == [0, 1, 2])
        #expect(transport.pathCounts.fallbacks.count == counts.fallbacks.count)
        await transport.disconnect()
        transport.close()
    }

    @Test(
        "a refused write comes back later as a failure of that write, not of the call that sent it",
        .timeLimit(.minutes(2)))
    func refusedWriteIsReportedLater() async throws {
        let fake = try FakeBlueZProcess(["--refuses-acquire"])
        let (transport, _) = try await Self.connect(fake)
        let failures = FailureLog()
        // One byte more than the MTU allows: BlueZ refuses it ("Failed to initiate write").
        let tooLong = await transport.mtu - 2
        try await transport.enqueueCommand(Array(repeating: 0, count: tooLong), to: Self.pf, timeout: .seconds(10)) {
            failures.add($0)
        }
        await failures.first()
        #expect(failures.all.count == 1)
        #expect(failures.all.first.map { "\($0)".contains("Failed to initiate write") } == true, "\(failures.all)")
        await transport.disconnect()
        transport.close()
    }
}
