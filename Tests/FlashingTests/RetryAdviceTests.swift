import Flashing
import McuMgr
import NordicDFUFrames
import SMP
import Testing
import Transport

/// "Run the same command again" follows only failures the same command may get past: a lost
/// link, a silent or busy device, a corrupted transfer. A refused image or a file that cannot
/// fit fails the same way every time, and its message says what to change instead.
struct RetryAdviceTests {
    static let reason = FlashReason(code: "runtime-differs", message: "the board's runtime differs from the file's")
    static let again = "run the same command again"

    @Test(
        "a full update that failed on the link or a busy device says to run the same command again",
        arguments: [
            McuMgrError.noResponse(command: "upload", attempts: 3, timeout: .seconds(5)),
            McuMgrError.tooManyDisconnects(4),
            McuMgrError.uploadMismatch,
            McuMgrError.deviceRefused(command: "upload", .returnCode(.busy, reason: nil))
        ] as [any Error & Sendable])
    func transientFailuresAdviseARetry(_ error: any Error & Sendable) {
        let text = FlashError.fullUpdateFailed(reason: Self.reason, error: error).description
        #expect(text.lowercased().contains(Self.again), "\(text)")
    }

    @Test(
        "a full update the device refused for good does not say to run it again",
        arguments: [
            McuMgrError.deviceRefused(command: "upload", .group(.image(.invalidImageTooLarge))),
            McuMgrError.deviceRefused(command: "upload", .group(.image(.invalidHash))),
            McuMgrError.deviceRefused(command: "upload", .group(.image(.invalidImageHeaderMagic))),
            McuMgrError.verificationFailed(expected: "1.2.3", slots: []),
            McuMgrError.frameTooLarge(command: "upload", size: 300, limit: 244),
            TransportError.serviceNotFound(SMPGATT.service)
        ] as [any Error & Sendable])
    func deterministicFailuresDoNot(_ error: any Error & Sendable) {
        let text = FlashError.fullUpdateFailed(reason: Self.reason, error: error).description
        #expect(!text.lowercased().contains(Self.again), "\(text)")
        #expect(text.contains("What the board holds now was not read back"), "\(text)")
    }

    @Test("a Nordic DFU whose image and init packet disagree is not sent again")
    func nordicHashFailureIsNotRetried() {
        let text = NordicDFUError.secureRejected(
            step: "execute", response: .failure(opcode: 0x04, result: 0x0B, extended: 0x0C)
        ).description
        #expect(!text.lowercased().contains(Self.again) && text.contains("fails the same way"), "\(text)")
        let lost = NordicDFUError.linkLost(step: "data object 3", attempts: 4).description
        #expect(lost.contains(Self.again), "\(lost)")
    }
}
