import Diagnostics
import SMP
import Transport

/// Everything that ends an McuMgr upgrade early. Each message says what went
/// wrong and what the user can do about it.
public enum McuMgrError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The options or the image cannot work.
    case invalidInput(String)
    /// The image cannot be installed (found before anything was sent).
    case invalidImage(McuMgrImageProblem)
    /// The board does not offer the SMP service.
    case smpServiceMissing
    /// The device answered `command` with an error (either SMP form).
    case deviceRefused(command: String, SMPErrorResponse)
    /// An answer to `command` could not be decoded.
    case malformedResponse(command: String, SMPError)
    /// `command` went unanswered `attempts` times.
    case noResponse(command: String, attempts: Int, timeout: Duration)
    /// The run used up its retries.
    case tooManyRetries(Int)
    /// The device took no new bytes through `attempts` retries; it stands at `offset` of `total`.
    case uploadStalled(offset: Int, total: Int, attempts: Int)
    /// The upgrade ran longer than its time limit; the upload stood at `offset` of `total`.
    case timeLimitReached(Duration, offset: Int, total: Int)
    /// The device's SHA-256 of the uploaded slot did not match the file.
    case uploadMismatch
    /// A frame does not fit one write and the device does not reassemble.
    case frameTooLarge(command: String, size: Int, limit: Int)
    /// An upload frame of `limit` bytes has no room for the image data the first chunk needs.
    case uploadFrameTooSmall(limit: Int)
    /// The state list is empty.
    /// The image is already confirmed in the secondary slot, so it cannot be tested.
    case alreadyConfirmedCannotTest
    /// Validation keeps finding another image to clear out of the way.
    case secondarySlotBusy(attempts: Int)
    /// After test or confirm the image is not marked as asked.
    case stateNotAccepted(command: String, expected: String)
    /// The final state read does not show the new image as expected.
    case verificationFailed(expected: String, slots: [ImageSlotState])
    /// Connecting again failed `attempts` times.
    case reconnectFailed(attempts: Int, last: TransportError)
    /// The link dropped more often than allowed.
    case tooManyDisconnects(Int)

    public var description: String {
        switch self {
        case let .invalidInput(why):
            return "cannot start the McuMgr upgrade: \(why)"
        case let .invalidImage(problem):
            return "the image cannot be installed: \(problem); nothing was sent to the board"
        case .smpServiceMissing:
            return
                "the board does not offer the McuMgr SMP service (\(SMPGATT.service)); it runs firmware without McuMgr over Bluetooth, so use another update method"
        case let .deviceRefused(command, error):
            return "the device refused \(command): \(Self.describe(error)); \(Self.advice(for: error))"
        case let .malformedResponse(command, error):
            return
                "the device's answer to \(command) could not be read (\(error)); check that the board runs a compatible McuMgr server"
        case let .noResponse(command, attempts, timeout):
            return
                "the device did not answer \(command) within \(timeout.readableText) (\(attempts) attempts); move closer to the board, check it is powered, and try again"
        case let .tooManyRetries(n):
            return
                "the upgrade gave up after \(n) retries on a poor link; move closer to the board or lower the pipeline depth and try again"
        case let .uploadStalled(offset, total, attempts):
            return
                "the device took no new bytes through \(attempts) retries at offset \(offset) of \(total); move closer to the board, or try again with pipelining off (depth 1) or a larger byte alignment"
        case let .timeLimitReached(limit, offset, total):
            return
                "the upgrade was still running after its time limit of \(limit) (the upload stood at \(offset) of \(total) bytes); the link is too poor: move closer to the board and try again"
        case .uploadMismatch:
            return
                "the device reports that the uploaded image does not match the file (SHA-256 mismatch); the transfer was corrupted, so run the update again"
        case let .frameTooLarge(command, size, limit):
            return
                "the \(size)-byte \(command) request does not fit one \(limit)-byte write and the device does not reassemble frames; connect with a larger MTU"
        case let .uploadFrameTooSmall(limit):
            return
                "an upload frame of \(limit) bytes has no room for the first 32 bytes of the image; connect with a larger MTU or let the device reassemble frames"
        case .alreadyConfirmedCannotTest:
            return
                "the image is already confirmed in the secondary slot and cannot be tested; reset the board to install it, or use confirm mode"
        case let .secondarySlotBusy(attempts):
            return
                "the secondary slot still holds another pending or confirmed image after \(attempts) attempts to clear it; erase the slot and try again"
        case let .stateNotAccepted(command, expected):
            return
                "after \(command) the device did not mark the image \(expected); its bootloader may not support this mode, so try another upgrade mode"
        case let .verificationFailed(expected, slots):
            let found = slots.map {
                "slot \($0.slot) \($0.version)\($0.active ? " active" : "")\($0.confirmed ? " confirmed" : "")"
            }
            return
                "after the reset the device does not run the new image \(expected) (found: \(found.isEmpty ? "no images" : found.joined(separator: ", "))); it may have failed to boot it and reverted, so check the image is built for this board"
        case let .reconnectFailed(attempts, last):
            return
                "could not connect to the board again after \(attempts) attempts (\(last)); it may still be swapping images, so wait a minute and check it advertises"
        case let .tooManyDisconnects(n):
            return "the link dropped \(n) times during the upgrade; move closer to the board and try again"
        }
    }

    public static func describe(_ error: SMPErrorResponse) -> String {
        switch error {
        case let .returnCode(rc, reason): return rc.description + (reason.map { " (\($0))" } ?? "")
        case let .group(err): return err.description
        }
    }

    /// A suggestion for the user, by device error.
    static func advice(for error: SMPErrorResponse) -> String {
        switch error {
        case let .group(.image(code)):
            switch code {
            case .noFreeSlot, .imageAlreadyPending:
                return "reset the board to finish the pending update, then try again"
            case .invalidImageTooLarge: return "the image is larger than the device's slot: build a smaller image"
            case .invalidImageHeaderMagic, .invalidImageHeader:
                return "the file is not a signed MCUboot image: sign it with imgtool"
            case .currentVersionIsNewer: return "the board runs a newer version: raise the image version"
            case .hashNotFound: return "the upload did not complete: run the update again"
            case .flashWriteFailed, .flashEraseFailed, .flashReadFailed, .flashOpenFailed:
                return "the device's flash failed: power-cycle the board and try again"
            default: return "check that the image is built and signed for this board"
            }
        case let .returnCode(rc, _):
            switch rc {
            case .notSupported:
                return "the device's McuMgr server lacks this command: enable it in the firmware or use another mode"
            case .busy: return "the device stayed busy: wait a moment and try again"
            case .noMemory, .messageTooLarge:
                return "the device ran out of buffer space: lower the pipeline depth or turn reassembly off"
            case .unsupportedTooNew: return "the device speaks only SMP v1: select SMP v1"
            case .badState: return "reset the board to finish a pending update, then try again"
            default: return "check the board's firmware and try again"
            }
        default: return "check the board's firmware and try again"
        }
    }
}

extension McuMgrError: DomainError {
    /// 65 for an image that cannot be for this board (malformed, damaged, too large), whether
    /// found here or refused by the device; 74 for every other failure.
    public var failureKind: FailureKind {
        switch self {
        case .invalidImage: return .badFirmware
        case let .deviceRefused(command, refusal) where command == ImageUploadRequest.name:
            switch refusal {
            case .group(.image(.invalidImageTooLarge)), .group(.image(.invalidImageHeaderMagic)),
                .group(.image(.invalidImageHeader)):
                return .badFirmware
            default: return .flashFailed
            }
        default: return .flashFailed
        }
    }
}

extension McuMgrError {
    /// True when running the same update again may succeed (a poor link, a device busy or
    /// reset); false when it would fail the same way (a bad or too large image, a command the
    /// device lacks, a mode its bootloader does not take).
    public var isTransient: Bool {
        switch self {
        case .noResponse, .tooManyRetries, .uploadStalled, .timeLimitReached, .uploadMismatch, .reconnectFailed,
            .tooManyDisconnects, .secondarySlotBusy:
            return true
        case .invalidInput, .invalidImage, .smpServiceMissing, .malformedResponse, .frameTooLarge, .uploadFrameTooSmall,
            .alreadyConfirmedCannotTest, .stateNotAccepted, .verificationFailed:
            return false
        case let .deviceRefused(_, refusal):
            switch refusal {
            case let .group(.image(code)):
                return [
                    .flashWriteFailed, .flashEraseFailed, .flashReadFailed, .flashOpenFailed, .hashNotFound,
                    .noFreeSlot, .imageAlreadyPending
                ].contains(code)
            case let .returnCode(rc, _): return rc == .busy || rc == .badState || rc == .timeout
            default: return false
            }
        }
    }
}
