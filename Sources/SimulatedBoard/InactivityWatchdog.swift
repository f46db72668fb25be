import LinkModel

/// The Nordic bootloaders' inactivity reset: a bootloader that goes 120 s without progress
/// restarts the board (docs/protocols/nordic-dfu.md). One timer runs at a time; progress only moves the
/// deadline, and a firing before the deadline schedules the rest.
struct InactivityWatchdog: Sendable {
    static let timeout: Duration = .seconds(120)
    /// The work tag of the watchdog's timer in its service.
    let tag: Int
    private(set) var lastProgress: VirtualInstant?
    private var scheduled = false

    init(tag: Int) { self.tag = tag }

    /// Whether the timer runs.
    var isRunning: Bool { scheduled }

    /// Progress: the deadline moves to 120 s from now (the timer starts if it does not run).
    mutating func touch(effects: inout ServiceEffects) {
        lastProgress = effects.now
        guard !scheduled else { return }
        scheduled = true
        effects.schedule(after: Self.timeout, tag: tag)
    }

    /// The timer fired: true when the board must reset now; otherwise the rest is scheduled.
    mutating func fired(effects: inout ServiceEffects) -> Bool {
        scheduled = false
        guard let last = lastProgress else { return false }
        let due = last + Self.timeout
        if effects.now >= due { return true }
        scheduled = true
        effects.schedule(after: due - effects.now, tag: tag)
        return false
    }

    /// Forgets all progress (a boot).
    mutating func reset() {
        lastProgress = nil
        scheduled = false
    }
}
