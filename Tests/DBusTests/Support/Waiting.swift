import DBus
import Synchronization
import TestSupport

/// Takes the next `count` signals from `stream`, giving up after `limit` so a broken test
/// fails instead of hanging. The limit is a safety net, not something the tests measure.
func collect(
    _ count: Int, from stream: AsyncStream<DBusSignal>, limit: Duration = .seconds(20)
) async throws -> [DBusSignal] {
    try await withThrowingTaskGroup(of: [DBusSignal]?.self) { group in
        group.addTask {
            var received: [DBusSignal] = []
            for await signal in stream {
                received.append(signal)
                if received.count == count { break }
            }
            return received
        }
        group.addTask {
            // Watchdog: fails the test after `limit`; the wait ends on the signals.
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let received = first else {
            throw BusFixtureError.gaveUpWaiting("\(count) signal(s)")
        }
        return received
    }
}

/// Two connections to one private bus: `server` exports objects, `client` calls them.
struct BusPair {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    init() throws {
        bus = try PrivateBus()
        server = try DBusConnection(bus: .address(bus.address))
        client = try DBusConnection(bus: .address(bus.address))
    }
}

/// A one-shot gate a test opens to let a blocked handler finish.
final class Gate: Sendable {
    let stream: AsyncStream<Void>
    let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    }

    func wait() async {
        for await _ in stream { return }
    }

    func open() {
        continuation.finish()
    }
}

/// Collects values appended from handlers running on other tasks.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
}
