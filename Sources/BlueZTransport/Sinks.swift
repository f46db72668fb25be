import Synchronization
import Transport

/// The streams a transport hands out: notifications per characteristic, link losses, link
/// watchers of in-flight operations, and state-change ticks for waits.
final class Sinks: Sendable {
    private struct Book {
        var nextID = 0
        var notify: [GATTCharacteristic: [Int: AsyncStream<[UInt8]>.Continuation]] = [:]
        var disconnects: [Int: AsyncStream<DisconnectReason>.Continuation] = [:]
        var ticks: [Int: AsyncStream<Void>.Continuation] = [:]
        var violations: [Int: AsyncStream<String>.Continuation] = [:]
        var finished = false
        mutating func id() -> Int {
            nextID += 1
            return nextID
        }
    }
    private let book = Mutex(Book())

    func notifications(of c: GATTCharacteristic) -> AsyncStream<[UInt8]> {
        // Unbounded: the flows keep at most one block (or one SMP window) of acks in flight.
        let (stream, sink) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        let id = book.withLock { b -> Int? in
            guard !b.finished else { return nil }
            let id = b.id()
            b.notify[c, default: [:]][id] = sink
            return id
        }
        guard let id else { sink.finish(); return stream }
        sink.onTermination = { [weak self] _ in _ = self?.book.withLock { $0.notify[c]?.removeValue(forKey: id) } }
        return stream
    }

    /// The link losses from now on, after `earlier` (a loss that happened before) when given.
    func disconnects(startingWith earlier: DisconnectReason? = nil) -> AsyncStream<DisconnectReason> {
        let (stream, sink) = AsyncStream<DisconnectReason>.makeStream(bufferingPolicy: .unbounded)
        if let earlier { sink.yield(earlier) }
        let id = book.withLock { b -> Int? in
            guard !b.finished else { return nil }
            let id = b.id()
            b.disconnects[id] = sink
            return id
        }
        guard let id else { sink.finish(); return stream }
        sink.onTermination = { [weak self] _ in _ = self?.book.withLock { $0.disconnects.removeValue(forKey: id) } }
        return stream
    }

    /// A stream that yields the first value BlueZ sent that it never sends (`violation`).
    func violations() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        let id = book.withLock { b -> Int? in
            guard !b.finished else { return nil }
            let id = b.id()
            b.violations[id] = sink
            return id
        }
        guard let id else { sink.finish(); return stream }
        sink.onTermination = { [weak self] _ in _ = self?.book.withLock { $0.violations.removeValue(forKey: id) } }
        return stream
    }

    func violation(_ text: String) {
        for sink in book.withLock({ Array($0.violations.values) }) { sink.yield(text) }
    }

    /// A stream that yields whenever the state may have changed.
    func ticks() -> AsyncStream<Void> {
        let (stream, sink) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = book.withLock { b -> Int? in
            guard !b.finished else { return nil }
            let id = b.id()
            b.ticks[id] = sink
            return id
        }
        guard let id else { sink.finish(); return stream }
        sink.onTermination = { [weak self] _ in _ = self?.book.withLock { $0.ticks.removeValue(forKey: id) } }
        return stream
    }

    func notify(_ c: GATTCharacteristic, _ bytes: [UInt8]) {
        for sink in book.withLock({ Array(($0.notify[c] ?? [:]).values) }) { sink.yield(bytes) }
    }

    func linkLost(_ reason: DisconnectReason) {
        for sink in book.withLock({ Array($0.disconnects.values) }) { sink.yield(reason) }
    }

    func tick() {
        for sink in book.withLock({ Array($0.ticks.values) }) { sink.yield() }
    }

    func finishAll() {
        let all = book.withLock { b -> [@Sendable () -> Void] in
            b.finished = true
            var enders: [@Sendable () -> Void] = []
            for (_, group) in b.notify { for (_, s) in group { enders.append { s.finish() } } }
            for (_, s) in b.disconnects { enders.append { s.finish() } }
            for (_, s) in b.ticks { enders.append { s.finish() } }
            for (_, s) in b.violations { enders.append { s.finish() } }
            b.violations = [:]
            b.notify = [:]
            b.disconnects = [:]
            b.ticks = [:]
            return enders
        }
        all.forEach { $0() }
    }
}
