import ArgumentParser
import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory

/// `flash FILE --retry-failed`: flashes again only the boards that failed in the last class
/// run of the same file, from the library's record (`ClassRunRecord`): the simulated boards'
/// record with `--simulate`, the real boards' otherwise. Here: the option's checks and words.
extension FlashCommand {
    func validateRetry() throws {
        guard retryFailed else { return }
        if !devices.isEmpty || allInRange || boards > 1 {
            throw ValidationError(
                "--retry-failed flashes the boards that failed in the last class run: leave out --device, --all-in-range and --boards"
            )
        }
    }

    /// Where the record of this command's boards lives, and for simulated boards those saved there.
    var classRunFolder: (folder: URL, simulatedBoards: Set<String>?) {
        guard simulate != nil else { return (ClassRunRecord.realBoardsFolder, nil) }
        let store = SimStore(option: simulation.simState)
        return (store.directory, Set(store.savedNames()))
    }

    /// The boards to flash again, or nil when nothing failed (after saying so).
    func boardsToRetry() throws -> [String]? {
        let (folder, saved) = classRunFolder
        let kind = simulate != nil ? "simulated boards" : "real boards (with --simulate: simulated ones)"
        guard let record = try ClassRunRecord.load(from: folder, simulatedBoards: saved) else {
            throw CLIError(
                .usage,
                "no class run of \(kind) recorded in \(folder.path): --retry-failed flashes again the boards that "
                    + "failed when several boards were flashed; flash the class first")
        }
        switch record.retry(file: file) {
        case let .otherFile(recorded):
            throw CLIError(
                .usage,
                "the last class run flashed \(recorded), not \(ClassRunRecord.canonical(file)): give that file "
                    + "to retry its failed boards, or flash the class with this file without --retry-failed")
        case .nothingFailed:
            StdErr.write(
                "bitflash: nothing to retry: all \(record.boards.count) boards of the last class run of \(record.file) were flashed\n"
            )
            return nil
        case let .boards(failed):
            StdErr.write(
                "bitflash: retrying \(failed.count) of \(record.boards.count) boards that failed: \(failed.joined(separator: ", "))\n"
            )
            return failed
        }
    }

    /// Keeps the run as the record `--retry-failed` reads: a class run (several boards), or a retry.
    func recordClassRun(_ results: [FlashResult], identities: [String: BoardIdentity]) {
        guard results.count > 1 || retryFailed else { return }
        let (folder, saved) = classRunFolder
        do {
            try ClassRunRecord.keep(
                ClassReport(results, identities: identities).boards, file: file, merging: retryFailed, in: folder,
                simulatedBoards: saved)
        } catch {
            StdErr.write("bitflash: warning: \(describe(error))\n")
        }
    }
}
