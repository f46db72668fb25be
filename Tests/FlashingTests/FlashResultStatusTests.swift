import Flashing
import Testing
import Transport

/// The exit status a failed session's result carries: the file's fault is 65, as `bitflash plan`
/// says for the same file; every other failure of a session is 74.
struct FlashResultStatusTests {
    static let reason = FlashReason(code: "runtime-differs", message: "the board's runtime differs from the file's")

    @Test("a session that fails because the file has no image to upload exits 65")
    func fileWithoutImageIs65() {
        for error: any Error in [
            FlashError.noFullImage(reason: Self.reason), FlashError.noImageForBoard("no image for this board")
        ] {
            let result = FlashResult(board: "sim", outcome: .failure(error), seconds: 1)
            #expect(result.exitStatus == .badFirmware, "\(error)")
        }
    }

    @Test("every other session failure exits 74, even when its error reports another status")
    func otherFailuresAre74() {
        for error: any Error in [
            FlashError.noFullPath(reason: Self.reason), FlashError.partialImpossible("no program region"),
            TransportError.notConnected(operation: "write")
        ] {
            let result = FlashResult(board: "sim", outcome: .failure(error), seconds: 1)
            #expect(result.exitStatus == .flashFailed, "\(error)")
        }
    }
}
