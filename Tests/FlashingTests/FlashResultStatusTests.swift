import Flashing
import Testing
import Transport

/// The failure kind a failed session's result carries: the file's fault is bad firmware, as
/// `bitflash plan` says for the same file; every other failure of a session is a failed flash.
struct FlashResultStatusTests {
    static let reason = FlashReason(code: "runtime-differs", message: "the board's runtime differs from the file's")

    @Test("a session that fails because the file has no image to upload is bad firmware")
    func fileWithoutImageIs65() {
        for error: any Error in [
            FlashError.noFullImage(reason: Self.reason), FlashError.noImageForBoard("no image for this board")
        ] {
            let result = FlashResult(board: "sim", outcome: .failure(error), seconds: 1)
            #expect(result.failureKind == .badFirmware, "\(error)")
        }
    }

    @Test("every other session failure is a failed flash, even when its error reports another kind")
    func otherFailuresAre74() {
        for error: any Error in [
            FlashError.noFullPath(reason: Self.reason), FlashError.partialImpossible("no program region"),
            TransportError.notConnected(operation: "write")
        ] {
            let result = FlashResult(board: "sim", outcome: .failure(error), seconds: 1)
            #expect(result.failureKind == .flashFailed, "\(error)")
        }
    }
}
