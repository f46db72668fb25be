import Diagnostics
import FirmwareImage
import Transport

/// The one error type of Nordic DFU: each case says what went wrong and what to do.
public enum NordicDFUError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A frame could not be decoded.
    case malformedFrame(String)
    /// The firmware has nothing in the board's application range.
    case noApplication(family: ChipFamily)
    case applicationTooLarge(bytes: Int, maximum: Int)
    /// The board offers neither the buttonless service, the DFU control service nor a bootloader.
    case noDFUService
    /// The buttonless service answered `20 01 07`: the link is not bonded.
    case notBonded
    /// The buttonless service refused to enter the bootloader.
    case buttonlessRefused(result: UInt8)
    /// The board did not come back as "DfuTarg" after the reset into the bootloader.
    case bootloaderNotFound(attempts: Int)
    /// A Secure DFU request was answered with an error.
    case secureRejected(step: String, response: SecureDFUResponse)
    /// A legacy DFU request was answered with an error status.
    case legacyRejected(step: String, opcode: UInt8, status: UInt8)
    /// An object's checksum did not match after the allowed attempts.
    case checksumMismatch(step: String, attempts: Int)
    /// No answer in time, after the allowed attempts.
    case timedOut(step: String, attempts: Int)
    /// The link kept dropping.
    case linkLost(step: String, attempts: Int)
    /// The legacy bootloader dropped every connection before its first answer: the bonding trap.
    case bondingTrap(attempts: Int)
    /// The run needed more retries than allowed.
    case tooManyRetries(step: String, retries: Int)
    /// The board answered something the protocol does not allow here.
    case unexpectedAnswer(step: String, bytes: [UInt8])

    public var description: String {
        switch self {
        case let .malformedFrame(what):
            return "malformed Nordic DFU frame: \(what)"
        case let .noApplication(family):
            return
                "the file holds no application for a \(family.chipName) board (nothing from \(Hex.number(DFUApplication.range(for: family).lowerBound))): "
                + "give the board's MakeCode hex or Universal Hex"
        case let .applicationTooLarge(bytes, maximum):
            return "the application is \(bytes) bytes, more than the \(maximum) bytes the board's bootloader accepts: "
                + "flash it over USB instead"
        case .noDFUService:
            return
                "the board offers no Nordic DFU (neither the buttonless service FE59 nor the micro:bit DFU control service): "
                + "flash it once over USB"
        case .notBonded:
            return
                "the board refused to enter its bootloader because this computer is not bonded with it (buttonless answer 07): "
                + "put the board into pairing mode (A+B + reset), pair it (bluetoothctl pair ADDRESS), then run bitflash again"
        case let .buttonlessRefused(result):
            return
                "the board refused to enter its bootloader (buttonless answer 0x\(Hex.number(result, digits: 2, prefix: false))): reset the board and try again; "
                + "if it keeps refusing, flash it over USB"
        case let .bootloaderNotFound(attempts):
            return
                "the board did not come back as \"DfuTarg\" after \(attempts) attempts: keep it close and powered; if it shows "
                + "the bootloader's '+' (or nothing), run the same command again to recover it"
        case let .secureRejected(step, response):
            return "the bootloader rejected \(step): \(Self.explain(response))"
        case let .legacyRejected(step, op, status):
            return
                "the bootloader rejected \(step) (10 \(Hex.number(op, digits: 2, prefix: false)) \(Hex.number(status, digits: 2, prefix: false)): \(LegacyDFUStatus(rawValue: status)?.words ?? "unknown status"))"
                + Self.legacyHint(op: op, status: status)
        case let .checksumMismatch(step, attempts):
            return
                "the board's checksum of \(step) did not match after \(attempts) attempts (packets were lost or corrupted): "
                + "move the board closer and run the same command again; the board stays in its bootloader until an update completes"
        case let .timedOut(step, attempts):
            return
                "no answer from the bootloader to \(step) after \(attempts) attempts: reset the board (it comes back in its "
                + "bootloader) and run the same command again"
        case let .linkLost(step, attempts):
            return
                "the link dropped \(attempts) times during \(step): move the board closer and run the same command again; "
                + "a board left in \"DfuTarg\" is recovered by the next run"
        case let .bondingTrap(attempts):
            return
                "the bootloader dropped all \(attempts) connections before answering. This is the bonding trap: this computer "
                + "keeps a bond with the board and encrypts the link, but the board's bootloader does not have that key. Remove the "
                + "bond (bluetoothctl remove ADDRESS) and run the same command again; pair again afterwards if the program needs it"
        case let .tooManyRetries(step, retries):
            return
                "the update needed \(retries) retries (the last during \(step)): the link loses too much; move the board "
                + "closer, away from other radios, and run the same command again"
        case let .unexpectedAnswer(step, bytes):
            return
                "unexpected answer \(bytes.hexText) during \(step): run the same command again; if it repeats, the board's "
                + "bootloader is not one bitflash knows"
        }
    }

    static func explain(_ r: SecureDFUResponse) -> String {
        guard case let .failure(_, result, ext) = r else { return r.bytes.hexText }
        let words =
            SecureDFUResult(rawValue: result)?.words
            ?? "unknown result 0x\(Hex.number(result, digits: 2, prefix: false))"
        switch (result, ext) {
        case (0x0B, 0x0C?):
            // Every object arrived with a matching CRC, so the image and its init packet disagree:
            // sending them again fails the same way.
            return "\(r.bytes.hexText), the image's hash does not match the one in its init packet (hash failed): "
                + "the image and the init packet bitflash made for it disagree, so sending them again fails the same way: "
                + "please report it, with the file"
        case (0x0B, 0x04?): return "\(r.bytes.hexText), init command invalid: the application size is zero"
        case (0x0B, 0x02?):
            return "\(r.bytes.hexText), wrong init command format: this bootloader expects the microbit_app init packet"
        case (0x04, _):
            return
                "\(r.bytes.hexText), \(words): the application does not fit the board's bootloader; flash it over USB"
        case (0x05, _): return "\(r.bytes.hexText), \(words): the init packet was refused (wrong version)"
        case (0x08, _):
            return "\(r.bytes.hexText), \(words): the bootloader lost the transfer's state; run the same command again"
        default:
            return "\(r.bytes.hexText), \(words)"
                + (ext.map { " (extended error 0x\(Hex.number($0, digits: 2, prefix: false)))" } ?? "")
        }
    }

    static func legacyHint(op: UInt8, status: UInt8) -> String {
        switch (op, status) {
        case (0x03, 0x06):
            return ": the data came too fast for the board; run again (bitflash lowers the packet-receipt interval)"
        case (0x04, 0x05): return ": the image arrived corrupted; run the same command again"
        case (0x01, 0x04): return ": the application is too large for the board; flash it over USB"
        case (0x02, 0x06):
            return ": the init packet does not match this board's SoftDevice; use a hex made for this board"
        default: return ": reset the board and run the same command again"
        }
    }
}

extension NordicDFUError: DomainError {
    public var failureKind: FailureKind { .flashFailed }
}
