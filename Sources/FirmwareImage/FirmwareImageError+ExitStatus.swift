import Diagnostics

extension FirmwareImageError: ExitStatusReporting {
    /// Every firmware-file problem is bad data (65): the message says what to fix in the file.
    public var exitStatus: ExitStatus { .badFirmware }
}
