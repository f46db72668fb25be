import Foundation
import Diagnostics
import Flashing
import Synchronization

/// Plays a simulated flash's modelled time at real speed, so that a person watching the demo
/// sees its progress bars move as fast as a real board's would and can follow each step.
///
/// The simulation runs on this thread and reports each event at its modelled time; the pacer
/// holds each event back until as much real time has passed since the step began. It decides
/// only when a line appears, never what happens: the simulation's outcome does not depend on it.
final class DemoPacer: Sendable {
    let isEnabled: Bool
    private let start = Mutex<ContinuousClock.Instant?>(nil)

    /// - Parameter enabled: false plays everything at once (`--fast`, or no person watching).
    init(enabled: Bool) {
        isEnabled = enabled
        if enabled { Self.showCursorOnInterrupt() }
    }

    /// A paced demo is long enough to be interrupted while its progress bar hides the cursor:
    /// Ctrl-C shows it again before the process ends (130, as a shell reports SIGINT).
    private static func showCursorOnInterrupt() {
        signal(SIGINT) { _ in
            let show: StaticString = "\u{1B}[?25h\n"
            _ = write(STDOUT_FILENO, show.utf8Start, show.utf8CodeUnitCount)
            _exit(ExitStatus.interrupted.rawValue)
        }
    }

    /// Whether a person is likely watching: standard output is a real terminal, not a pipe or
    /// a file (`BITFLASH_FORCE_TTY` draws bars into a pipe for tests, and does not pace).
    static var watched: Bool { isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb" }

    /// Starts the clock of a new step: its modelled time begins now.
    func beginStep() {
        guard isEnabled else { return }
        start.withLock { $0 = ContinuousClock.now }
    }

    /// Waits until the real time since the step began reaches `modelled`.
    func wait(until modelled: Duration) {
        guard isEnabled, let begun = start.withLock({ $0 }) else { return }
        let due = begun + modelled
        let now = ContinuousClock.now
        guard due > now else { return }
        Thread.sleep(forTimeInterval: (due - now).seconds)
    }
}
