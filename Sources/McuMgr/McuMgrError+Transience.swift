import Diagnostics
import SMP

extension McuMgrError: TransienceReporting {
    /// A silent, busy or flaky link or device, or a transfer that arrived corrupted, may go
    /// better on the next run; an image, an option or a state the device refuses does not
    /// (the advice of each message says what to change instead).
    public var isTransient: Bool {
        switch self {
        case .noResponse, .tooManyRetries, .uploadMismatch, .reconnectFailed, .tooManyDisconnects:
            return true
        case let .deviceRefused(_, error):
            switch error {
            case .returnCode(.busy, _), .group(.image(.hashNotFound)): return true
            default: return false
            }
        case .invalidInput, .smpServiceMissing, .malformedResponse, .uploadStalled, .frameTooLarge, .uploadFrameTooSmall,
             .alreadyConfirmedCannotTest, .secondarySlotBusy, .stateNotAccepted, .verificationFailed:
            return false
        }
    }
}
