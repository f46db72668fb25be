import Foundation

/// What a child has done so far (its output, its pipes reaching their end, its end), and a count
/// of those changes that waits wait on.
///
/// Everything is guarded by one condition variable, and a wait checks the count and starts
/// waiting under that same lock, so a change that lands between a check and the wait still wakes
/// it: no wake-up can be lost. The changes come from threads of their own (a blocking `read` per
/// pipe, Foundation's termination thread), never from a dispatch queue or the cooperative pool,
/// which the suites running beside a test may hold.
final class ChildEvents: @unchecked Sendable {
    private let condition = NSCondition()
    private var out = Data()
    private var err = Data()
    private var closedPipes = 0
    private var generation = 0

    /// The count of changes so far.
    var changes: Int { locked { generation } }
    var stdout: Data { locked { out } }
    var stderr: Data { locked { err } }
    /// Both pipes have reached their end: all the child wrote is in `stdout` and `stderr`.
    var drained: Bool { locked { closedPipes == 2 } }

    func received(_ data: Data, onStandardError: Bool) {
        change { onStandardError ? $0.err.append(data) : $0.out.append(data) }
    }

    func pipeClosed() { change { $0.closedPipes += 1 } }

    /// Foundation has marked the child ended (its `isRunning` is false).
    func childEnded() { change { _ in } }

    /// Blocks the calling thread until the count passes `seen`, or until `deadline` (a bound that
    /// keeps a broken test from hanging; it never decides what counts).
    func blockingNext(after seen: Int, deadline: ContinuousClock.Instant) {
        let end = Date(timeIntervalSinceNow: Self.seconds(ContinuousClock.now.duration(to: deadline)))
        condition.lock()
        defer { condition.unlock() }
        while generation == seen {
            if !condition.wait(until: end) { return }
        }
    }

    /// As `blockingNext`, awaiting: the blocking wait runs on a thread of its own, so the wake-up
    /// does not depend on a free thread of the cooperative pool.
    func next(after seen: Int, deadline: ContinuousClock.Instant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.blockingNext(after: seen, deadline: deadline)
                continuation.resume()
            }
        }
    }

    /// Reads `handle` to its end on a thread of its own, one blocking `read` after another, and
    /// records each piece the moment it arrives.
    func startReading(_ handle: FileHandle, onStandardError: Bool) {
        let thread = Thread {
            let fd = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    self.received(Data(buffer[0..<n]), onStandardError: onStandardError)
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            self.pipeClosed()
        }
        thread.name = onStandardError ? "child stderr" : "child stdout"
        thread.start()
    }

    private func change(_ body: (ChildEvents) -> Void) {
        condition.lock()
        body(self)
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private static func seconds(_ d: Duration) -> TimeInterval {
        max(0, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }
}
