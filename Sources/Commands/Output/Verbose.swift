import Foundation
import Logging
import SimulatedBoard
import Synchronization

/// `-v` and `-vv`: protocol traces on standard error through swift-log, bytes in hex.
///
/// `-v` logs the flows' own trace lines at `debug` (every request and answer of the
/// partial-flashing and SMP exchanges, in hex). `-vv` adds, at `trace`, every line the
/// simulation recorded: link-layer writes and notifications with their bytes, connection
/// events, timers and faults. Standard output keeps the progress and results.
enum Verbose {
    private static let level = Mutex(Logger.Level.notice)
    private static let started = Mutex(false)

    /// Sets up logging once for the process and sets the level from the `-v` count.
    static func bootstrap(_ verbosity: Int) {
        started.withLock { done in
            if !done {
                LoggingSystem.bootstrap { label in
                    var handler = StreamLogHandler.standardError(label: label)
                    handler.logLevel = .trace
                    return handler
                }
                done = true
            }
        }
        level.withLock { $0 = verbosity >= 2 ? .trace : (verbosity == 1 ? .debug : .notice) }
    }

    /// The logger at the level `-v` asked for.
    static var log: Logger {
        var logger = Logger(label: "bitflash")
        logger.logLevel = level.withLock { $0 }
        return logger
    }

    static var isTracing: Bool { level.withLock { $0 } <= .trace }

    /// At `-vv`: the simulation's own record of a run (writes, notifications, events).
    static func dump(_ trace: Trace, names: [String]) {
        guard isTracing else { return }
        let logger = log
        for e in trace.entries where e.kind != .report {
            let who = names.indices.contains(e.board) ? names[e.board] : (e.board < 0 ? "link" : "board \(e.board)")
            logger.trace("\(String(format: "%10.6f", Double(e.t) / 1e6)) s \(who) \(e.kind.rawValue): \(e.text)")
        }
    }
}
