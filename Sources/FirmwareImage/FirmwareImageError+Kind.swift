import Diagnostics

extension FirmwareImageError: DomainError {
    /// Every firmware-file problem is bad firmware: the message says what to fix in the file.
    public var failureKind: FailureKind { .badFirmware }
}
