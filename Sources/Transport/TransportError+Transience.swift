import Diagnostics

extension TransportError: TransienceReporting {
    /// A link that dropped, timed out or could not be made may hold on the next run; a service
    /// the board does not offer, or a run that was cancelled, is no better the next time.
    public var isTransient: Bool {
        switch self {
        case .timeout, .disconnected, .connectFailed, .notConnected, .failed: return true
        case .serviceNotFound, .characteristicNotFound, .cancelled: return false
        }
    }
}
