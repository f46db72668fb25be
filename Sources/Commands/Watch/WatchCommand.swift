import ArgumentParser
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Laboratory
import Synchronization

/// `bitflash watch FILE|DIR ...`: the edit loop. Flashes a watched file whenever it changes, and
/// every new `.hex` that lands in a watched folder (MakeCode's download into ~/Downloads), to
/// the boards `flash` would flash with the same options, through the same code.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract:
            "Flash a file whenever it changes, or each new .hex downloaded into a folder, until Ctrl-C.",
        discussion: """
            Takes the board options of `bitflash flash` (--device, --all-in-range, --simulate, --mode, ...). \
            A watched file is flashed at the start when it exists, then after each change; in a watched \
            folder, only .hex files that appear or change after the start are flashed (a browser's \
            name.hex.crdownload or name.hex.part counts once it is renamed to name.hex; name (1).hex is a \
            new file). The folders are polled every 250 ms. A file is flashed only once its size and time \
            stayed the same for --settle seconds and it parses completely as firmware (a hex must reach its \
            end-of-file record); a file that does not parse is waited on, and reported only after it stayed \
            unchanged for --incomplete-wait seconds. Of files ready at once, the newest is flashed and the \
            older ones are passed over once it is flashed (a newer file the flash refuses, such as one for \
            another board, passes nothing over). One line per flashed board (with --json, one object per \
            flash). A path that does not exist is waited for beside others that do; alone, or in a folder \
            that does not exist, it ends the watch at once (66), as a watched folder that is deleted or moved \
            does. Ctrl-C or SIGTERM stops: a simulated flash under way finishes, a real one is stopped \
            and reported as not finished (the next run continues it); the exit code is then 130 (Ctrl-C) or \
            143 (SIGTERM). With -v, each change seen and each settled file that is not complete firmware yet \
            is noted on standard error.
            """)

    @OptionGroup var flash: FlashCommand

    @Argument(help: ArgumentHelp("More files or folders to watch.", valueName: "FILE|DIR"))
    var more: [String] = []

    @Option(
        parsing: .unconditional,
        help: Limits.watchSeconds.help(
            "How long a changed file must stay the same before it is read", valueName: "SECONDS"),
        transform: Limits.watchSeconds.transform)
    var settle: Double = 1

    @Option(
        name: .customLong("incomplete-wait"), parsing: .unconditional,
        help: Limits.watchSeconds.help(
            "How long a file that is not yet complete firmware may stay unchanged before it is reported",
            valueName: "SECONDS"),
        transform: Limits.watchSeconds.transform)
    var incompleteWait: Double = 10

    /// How often the watched files are looked at (polling: no C module is needed for inotify).
    static let pollInterval = Duration.milliseconds(250)

    /// What of `flash`'s options watch cannot do (checked in `run`: a `validate()` here would
    /// print the usage of `flash watch`).
    var refusal: String? {
        if flash.udp != nil {
            return "watch flashes over Bluetooth (real or simulated): leave out --udp"
        }
        if flash.dryRun { return "watch flashes; to see a plan, run `bitflash flash FILE --dry-run`" }
        if flash.retryFailed {
            return "--retry-failed belongs to `bitflash flash`: watch flashes every board it is given"
        }
        if flash.output.trace != nil {
            return "--trace records one flash: use it with `bitflash-lab flash`"
        }
        return nil
    }

    /// The watched paths, and the kind `--simulate` names when its word stands among them
    /// (`watch A B --simulate microbit-v1`: the flash's own arguments hold only two words).
    var watched: (paths: [String], profile: SimProfile?) {
        let words = [flash.file] + flash.otherWords + more
        if let named = flash.namedProfile { return (words, named) }
        let (profile, rest) = SimulateOption.split(words, simulate: flash.simulateGiven, keeping: 1)
        return (rest, profile)
    }

    var paths: [String] { watched.paths }

    /// How a stopped watch exits: 128 + the signal, as a shell reports it (130 Ctrl-C, 143 SIGTERM).
    static func exitStatus(signal: Int32) -> ExitStatus { signal == SIGTERM ? .terminated : .interrupted }

    func run() async throws {
        if let refusal {
            StdErr.write("bitflash: error: \(refusal)\n")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let stop = StopRequest()
        let loop = Task { await watch(stop) }
        let sources = [(SIGINT, "Ctrl-C"), (SIGTERM, "SIGTERM")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                // A second signal does not wait for a flash to wind down.
                if stop.request(name) > 1 { _exit(Self.exitStatus(signal: number).rawValue) }
                loop.cancel()
            }
            source.resume()
            return source
        }
        let status = await loop.value
        for source in sources { source.cancel() }
        if let name = stop.signalName {
            StdErr.write("bitflash: stopped (\(name))\n")
            throw ExitCode(Self.exitStatus(signal: name == "SIGTERM" ? SIGTERM : SIGINT).rawValue)
        }
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Polls until cancelled; returns a status only when it cannot watch at all.
    private func watch(_ stop: StopRequest) async -> ExitStatus {
        let report = WatchReport(json: flash.output.json, verbose: flash.output.verbose > 0)
        let clock = ContinuousClock()
        var state = DownloadWatch(
            settle: .milliseconds(Int64(settle * 1000)),
            incompleteWait: .milliseconds(Int64(incompleteWait * 1000)))
        // A file that is not there yet is waited for beside other watched paths; a path in a
        // folder that does not exist, or nothing at all there to watch, ends the watch at once.
        let missing = paths.filter { !FileManager.default.fileExists(atPath: $0) }
        let noFolder = missing.first { !Self.isFolder(OutputFile.folder(of: $0).nonEmpty ?? ".") }
        if let path = noFolder ?? (missing.count == paths.count ? missing.first : nil) {
            StdErr.write(
                "bitflash: error: \(path): no such file or folder to watch; give a file that exists, or the folder "
                    + "it will be saved into (a browser's downloads folder)\n")
            return .cannotRead
        }
        let folders = paths.filter { Self.isFolder($0) }
        for folder in folders where access(folder, R_OK | X_OK) != 0 {
            StdErr.write("bitflash: error: cannot read the folder \(folder)\n")
            return .cannotRead
        }
        let start = stamps()
        state.start(
            existing: start.filter { $0.value.inFolder }.mapValues(\.stamp),
            flashNow: start.filter { !$0.value.inFolder }.mapValues(\.stamp), now: clock.now)
        report.watching(paths, folders: Set(folders))
        while !Task.isCancelled {
            if let gone = folders.first(where: { !Self.isFolder($0) }) {
                StdErr.write(
                    "bitflash: error: the watched folder \(gone) was deleted or moved; nothing lands there any more: "
                        + "watch it again once it is back\n")
                return .cannotRead
            }
            for path in state.observe(stamps().mapValues(\.stamp), now: clock.now) {
                report.changed(path, size: state.files[path]?.stamp.size ?? 0)
            }
            for path in state.ready(now: clock.now) {
                let before = FileStamp.of(path)
                let firmware: Firmware
                do {
                    firmware = try FirmwareFileLoading.read(path).firmware
                } catch {
                    let first = state.files[path]?.state == .pending
                    if let reason = state.unparsable(path, reason: describe(error), now: clock.now) {
                        report.incomplete(path, reason, waited: incompleteWait)
                    } else if first, let size = state.files[path]?.stamp.size {
                        report.waiting(path, size: size, describe(error))
                    }
                    continue
                }
                // What was read is what settled only if the file did not change since the poll or meanwhile.
                let after = FileStamp.of(path)
                guard before == after, before == state.files[path]?.stamp else {
                    state.changedWhileRead(path, stamp: after, now: clock.now)
                    break
                }
                state.flashing(path)
                FirmwareFileLoading.warn(firmware, file: path)
                // A file the flash refuses (for another board) supersedes nothing: an older
                // download waiting is tried next.
                if await flashFile(path, firmware, report: report, stop: stop) {
                    for older in state.flashed(path) { report.passedOver(older, newer: path) }
                }
                break
            }
            try? await clock.sleep(for: Self.pollInterval)
        }
        return .ok
    }

    /// Flashes one checked file through `flash`'s own code, and reports it. Returns false when
    /// the file itself was refused (65: for another board, nothing of it for these boards).
    private func flashFile(
        _ path: String, _ firmware: Firmware, report: WatchReport, stop: StopRequest
    ) async -> Bool {
        var command = flash
        command.file = path
        command.secondWord = watched.profile?.description
        report.flashing(path)
        do {
            guard
                case .flashed(var results) = try await command.flashBoards(
                    firmware: firmware,
                    output: { mode, boards, _ in
                        // On a terminal, the class grid while the boards are flashed; watch's
                        // own lines then say how each ended.
                        mode == .terminal ? GridOutput(boards: boards, closing: .wipe) as FlashOutput : SilentOutput()
                    })
            else { return true }
            if let name = stop.signalName {
                // Cut short by a signal: never a success unless the board finished.
                results = results.map { r in
                    var r = r
                    if r.error != nil {
                        r.error =
                            "stopped by \(name) before the flash finished; the board keeps what it received: flash again to continue"
                    }
                    return r
                }
            }
            report.flashed(path, results)
            return !results.isEmpty
                && !results.allSatisfy { $0.error != nil && $0.failureKind == .badFirmware }
        } catch {
            report.failed(path, error)
            return ((error as? CLIError)?.exitStatus ?? classify(error)) != .badFirmware
        }
    }

    static func isFolder(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }

    /// Every watched file with its stamp: the named files that exist, and the `.hex` files in
    /// the named folders (not hidden ones, not a browser's unfinished `.crdownload`/`.part`).
    private func stamps() -> [String: (stamp: FileStamp, inFolder: Bool)] {
        var out: [String: (stamp: FileStamp, inFolder: Bool)] = [:]
        for path in paths {
            if Self.isFolder(path) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                for name in names where !name.hasPrefix(".") && name.lowercased().hasSuffix(".hex") {
                    let full = (path as NSString).appendingPathComponent(name)
                    if let s = FileStamp.of(full) { out[full] = (s, true) }
                }
            } else if let s = FileStamp.of(path) {
                out[path] = (s, false)
            }
        }
        return out
    }
}

/// Ctrl-C or SIGTERM, counted: the first stops the watch, a second exits at once.
final class StopRequest: Sendable {
    private let book = Mutex((count: 0, name: String?.none))
    /// Counts a stop by the signal `name` (`Ctrl-C`, `SIGTERM`); returns how many came.
    func request(_ name: String) -> Int {
        book.withLock {
            $0.count += 1
            if $0.name == nil { $0.name = name }
            return $0.count
        }
    }
    var requested: Bool { book.withLock { $0.count > 0 } }
    /// The signal that stopped the watch first, if one did.
    var signalName: String? { book.withLock { $0.name } }
}

extension String {
    /// Nil for the empty string.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
