/// An error that knows whether running the same command again, unchanged, may succeed: a
/// lost link, a busy or silent device, a corrupted transfer may; a file too large for the slot,
/// an image the device refuses, an option the board cannot honour fail the same way again.
/// Messages advise running the same command again only for transient failures.
public protocol TransienceReporting: Error {
    /// True when the same run, unchanged, may succeed later.
    var isTransient: Bool { get }
}

/// Whether an error is worth running again unchanged.
public enum Transience {
    /// Whether `error` is transient; an error that does not say is taken as not transient, so
    /// that no message promises what a retry cannot give.
    public static func of(_ error: any Error) -> Bool {
        (error as? any TransienceReporting)?.isTransient ?? false
    }
}
