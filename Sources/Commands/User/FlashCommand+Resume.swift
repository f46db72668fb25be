import Flashing

/// The simulated interruption's words. (The resume records themselves are the library's:
/// `ResumeRecords`, through `Flasher`, for real and simulated boards alike.)
extension FlashCommand {
    /// The result of a run stopped by `--sim-kill-at`: what a killed bitflash leaves behind.
    static func killed(_ result: FlashResult, at: Duration) -> FlashResult {
        var r = result
        r.error =
            "bitflash was stopped at \(at.seconds) s (modelled, --sim-kill-at) as if killed; the board keeps "
            + "what it received: run the same command again to continue"
        return r
    }
}
