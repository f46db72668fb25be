import FirmwareImage
import Flashing
import Synchronization

/// One step of a flash of one or more boards, in the order it happened.
public enum FlashUpdate: Sendable {
    /// Progress of one board: a phase, progress, a decision, a note, a retry, a trace line.
    case event(FlashEvent)
    /// Something to tell the user beside the flash: a resume record that could not be read or saved.
    case warning(board: String, message: String)
    /// One board's flash has ended: succeeded, failed or cancelled. Comes once per board.
    case finished(BoardFlashResult)
}

/// How one board's flash ended.
public struct BoardFlashResult: Sendable {
    /// The result, as `--json` prints it, with its failure kind when it failed.
    public var result: FlashResult
    /// The address the board was found at (nil when it was never found).
    public var address: String?
    /// The name the board advertised when it was found (nil when it was never found, or has none).
    public var name: String?
    /// The session's own outcome, when the session ran (a dry run's plan is in it).
    public var session: Result<SessionOutcome, any Error>?
    /// The adapter the board was flashed through (`hci1`), when several were given.
    public var adapter: String?
    /// The kind of board it was found to be (nil when it was never reached).
    public var kind: Board?

    /// The board as it was asked for (`FlashResult.board`).
    public var board: String { result.board }
    /// True when the board runs what it was sent.
    public var succeeded: Bool { result.error == nil }
}

/// The updates of a flash, as an asynchronous sequence that ends after the last board's
/// `.finished`. Nothing runs until the sequence is iterated; iterate it once.
///
/// Cancelling the task that iterates stops every flash cleanly: each board's link is closed,
/// the sequence still delivers a `.finished` result per board (an interrupted partial flash
/// leaves its resume record, so the next flash of the same file continues), then it ends.
/// Leaving the loop early cancels the flashes too, without waiting for their results.
public struct FlashUpdates: AsyncSequence, Sendable {
    /// Each step of the flashes, in order.
    public typealias Element = FlashUpdate

    let work: @Sendable (UpdateChannel) async -> Void

    /// Starts the flashes.
    public func makeAsyncIterator() -> Iterator {
        let channel = UpdateChannel()
        let work = self.work
        let task = Task {
            await work(channel)
            channel.finish()
        }
        return Iterator(channel: channel, handle: WorkHandle(task: task))
    }

    /// Delivers the updates in order; `nil` once every board has finished.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: UpdateChannel
        let handle: WorkHandle

        /// The next update; after a cancellation, the remaining ones until every board has
        /// finished, then nil.
        public mutating func next() async -> FlashUpdate? {
            let handle = self.handle
            return await withTaskCancellationHandler {
                await channel.next()
            } onCancel: {
                handle.task.cancel()
            }
        }
    }
}

/// Cancels the work when the iterator goes away.
final class WorkHandle: Sendable {
    let task: Task<Void, Never>
    init(task: Task<Void, Never>) { self.task = task }
    deinit { task.cancel() }
}

/// A one-reader queue of updates that keeps delivering after the reader's task is cancelled,
/// so that the results of a cancelled flash still arrive.
final class UpdateChannel: Sendable {
    private struct State {
        var buffer: [FlashUpdate] = []
        var finished = false
        var waiting: CheckedContinuation<FlashUpdate?, Never>?
    }

    private let state = Mutex(State())

    func send(_ update: FlashUpdate) {
        let waiter = state.withLock { s -> CheckedContinuation<FlashUpdate?, Never>? in
            guard !s.finished else { return nil }
            if let w = s.waiting {
                s.waiting = nil
                return w
            }
            s.buffer.append(update)
            return nil
        }
        waiter?.resume(returning: update)
    }

    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<FlashUpdate?, Never>? in
            s.finished = true
            defer { s.waiting = nil }
            return s.buffer.isEmpty ? s.waiting : nil
        }
        waiter?.resume(returning: nil)
    }

    func next() async -> FlashUpdate? {
        await withCheckedContinuation { continuation in
            let ready: FlashUpdate?? = state.withLock { s in
                if !s.buffer.isEmpty { return .some(s.buffer.removeFirst()) }
                if s.finished { return .some(nil) }
                s.waiting = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
