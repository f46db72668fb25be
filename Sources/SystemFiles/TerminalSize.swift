#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch

/// The terminal a descriptor is on: its width, and the resizes of its window. The kernel sends
/// SIGWINCH to the terminal's foreground process group whenever its size changes (`TIOCSWINSZ`,
/// tty_ioctl(4)); the one signal handler for it lives here, with the module's other system calls.
public enum TerminalSize {
    /// The columns of the terminal on `descriptor` (`ioctl(TIOCGWINSZ)`), nil when the
    /// descriptor is no terminal or the terminal says 0.
    public static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard systemWindowSize(descriptor, &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The rows of the terminal on `descriptor`, nil when the descriptor is no terminal or the
    /// terminal says 0.
    public static func rows(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard systemWindowSize(descriptor, &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Calls `handler` after each SIGWINCH, on a queue of its own, until the watch is cancelled
    /// (or released). SIGWINCH is ignored by default (signal(7)), so a process that watches
    /// nothing loses nothing; the watch only adds a caller.
    public static func watchResizes(_ handler: @escaping @Sendable () -> Void) -> ResizeWatch {
        ResizeWatch(handler)
    }
}

/// A watch for SIGWINCH (`TerminalSize.watchResizes`). Unchecked: its one stored value is a
/// dispatch source, whose `cancel` may be called from any thread (dispatch_source_cancel(3)).
public final class ResizeWatch: @unchecked Sendable {
    private let source: any DispatchSourceSignal

    init(_ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeSignalSource(
            signal: SIGWINCH, queue: DispatchQueue(label: "bitflash.terminal-resize"))
        source.setEventHandler(handler: handler)
        source.resume()
    }

    /// Stops calling the handler.
    public func cancel() { source.cancel() }

    deinit { source.cancel() }
}

private func systemWindowSize(_ descriptor: Int32, _ size: inout winsize) -> Int32 {
    ioctl(descriptor, UInt(TIOCGWINSZ), &size)
}
