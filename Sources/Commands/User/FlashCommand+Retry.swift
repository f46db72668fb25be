import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory

/// `flash FILE --retry-failed`: flashes again only the boards that failed in the last class
/// run of the same file, from its record (`ClassRunRecord`): the simulated boards' record with
/// `--simulate`, the real boards' otherwise.
extension FlashCommand {
    func validateRetry() throws {
        guard retryFailed else { return }
        if !devices.isEmpty || allInRange || boards > 1 {
            throw ValidationError(
                "--retry-failed flashes the boards that failed in the last class run: leave out --device, --all-in-range and --boards"
            )
        }
    }

    /// The boards to flash again, or nil when nothing failed (after saying so).
    func boardsToRetry() throws -> [String]? {
        let folder =
            simulate != nil
            ? ClassRunRecord.simulatedFolder(SimStore(option: simulation.simState)) : ClassRunRecord.realBoardsFolder
        let kind = simulate != nil ? "simulated boards" : "real boards (with --simulate: simulated ones)"
        guard let record = try ClassRunRecord.load(from: folder) else {
            throw CLIError(
                .usage,
                "no class run of \(kind) recorded in \(folder.path): --retry-failed flashes again the boards that "
                    + "failed when several boards were flashed; flash the class first")
        }
        guard record.file == ClassRunRecord.canonical(file) else {
            throw CLIError(
                .usage,
                "the last class run flashed \(record.file), not \(ClassRunRecord.canonical(file)): give that file "
                    + "to retry its failed boards, or flash the class with this file without --retry-failed")
        }
        let failed = record.failedBoards
        guard !failed.isEmpty else {
            StdErr.write(
                "bitflash: nothing to retry: all \(record.boards.count) boards of the last class run of \(record.file) were flashed\n"
            )
            return nil
        }
        StdErr.write(
            "bitflash: retrying \(failed.count) of \(record.boards.count) boards that failed: \(failed.joined(separator: ", "))\n"
        )
        return failed
    }

    /// Keeps the run as the record `--retry-failed` reads: a class run (several boards), or a retry.
    func recordClassRun(_ results: [FlashResult], identities: [String: BoardIdentity], folder: URL) {
        guard results.count > 1 || retryFailed else { return }
        ClassRunRecord.keep(ClassReport(results, identities: identities), file: file, merging: retryFailed, in: folder)
    }
}
