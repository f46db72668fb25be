import Diagnostics
import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Synchronization
import Transport

/// The flash of the selected boards, shared by `flash` and `watch`: real boards (in
/// FlashCommand+BlueZ.swift) or simulated ones on modelled adapters (here).
extension FlashCommand {
    /// How a flash of the selected boards ended: a dry run printed its plans (with this status),
    /// or the boards were flashed with these results (shown by the output, not yet judged).
    enum BoardsRun {
        case planned(ExitStatus)
        case flashed([FlashResult])
    }

    /// Makes the output of a flash for these boards (`Output.make` unless a caller such as
    /// `watch` shows results its own way).
    typealias OutputMaker = (_ mode: OutputMode, _ boards: [String], _ verbosity: Int) -> FlashOutput

    /// Flashes `file` to the selected boards: simulated ones with --simulate, else real ones
    /// (--device, --all-in-range, or the board this computer flashed last).
    /// - Parameters:
    ///   - given: the file's firmware when the caller has already read it (`watch` reads and checks
    ///     the file before it flashes, so that what is flashed is exactly what was checked).
    ///   - makeOutput: the output, `Output.make` by default.
    func flashBoards(firmware given: Firmware? = nil, output makeOutput: OutputMaker? = nil) async throws -> BoardsRun {
        var only: [String]?
        if retryFailed {
            guard let failed = try boardsToRetry() else { return .flashed([]) }
            only = failed
        }
        // Real boards unless --simulate: with no board named, the one flashed last (runOnDevices).
        if simulate == nil {
            return try await runOnDevices(only, firmware: given, output: makeOutput ?? Output.make)
        }
        do {
            Verbose.bootstrap(output.verbose)
            let store = SimStore(option: simulation.simState)
            let names = only ?? SimStore.names(count: boards)
            // Without a profile, the boards already in the state folder say what they are.
            let profile = simulation.profile(namedProfile, store: store, name: names[0])
            if let trace = output.trace {
                try OutputFile.refuseInputs(
                    trace, inputs: [file] + (dfuImage.map { [$0] } ?? []), what: "the trace",
                    stateFolder: store.directory)
            }
            let firmware = try given ?? FirmwareFileLoading.loadForFlash(file)
            let plan = try makePlan(firmware, profile: profile)
            // Held until the boards and their resume records are saved (see StateFolderLock);
            // taken once the file is known to be good, so a refused file leaves no folder behind.
            let lock = try StateFolderLock.hold(store.directory, waitSeconds: stateWait ?? 30)
            defer { withExtendedLifetime(lock) {} }
            var sim = Simulation(
                link: try simulation.linkProfile(), faults: simulation.faultPlan(),
                adapters: try simulation.adapterProfiles())
            sim.connectionsPerAdapter = bluetooth.maxConnections
            let flasher = try self.flasher(.simulated(resume: FileResumeStore(simulated: store)))
            var ids: [SimulatedEntry] = []
            for (i, name) in names.enumerated() {
                ids.append(
                    (
                        flasher.resumed(plan, board: name) { StdErr.write("bitflash: warning: \($0)\n") },
                        sim.addBoard(
                            try store.loadOrCreate(name, profile: profile, index: Int(name.dropFirst(4)) ?? i + 1)),
                        name
                    ))
            }
            // The boards share the simulated adapters, each within its connection limit; each board's
            // path is read from it first (a dry run on a copy of the boards), as its session decides.
            let preview = try flasher.forecast(plan, boards: ids, in: sim).map(ClassPreview.init)
            if dryRun {
                if let preview { StdOut.write((output.json ? try JSONText.line(preview) : preview.line) + "\n") }
                let runs = flasher.flash(ids, in: &sim).runs
                for (entry, _) in zip(ids, runs) { try store.save(sim.board(entry.board), as: entry.name) }
                return .planned(try printPlans(zip(names, runs.map(\.outcome)).map { ($0, $1) }))
            }
            let out = SharedOutput((makeOutput ?? Output.make)(output.mode, names, output.verbose))
            var identities: [String: BoardIdentity] = [:]
            for entry in ids {
                let profile = try sim.board(entry.board).profile
                identities[entry.name] = BoardIdentity(name: profile.name, address: profile.address)
            }
            out.identify(identities)
            if let preview { out.classEstimate(preview) }
            let kill = simulation.killAt.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
            let (runs, checkpoints) = flasher.flash(
                ids, in: &sim, deadline: kill ?? SimulatedFlash.defaultDeadline, onEvent: { out.event($0) })
            // A board whose file cannot be saved still gets its result, which says so (73); its
            // records are kept only once it is saved.
            var unsaved: [String: String] = [:]
            for entry in ids {
                do { try store.save(sim.board(entry.board), as: entry.name) } catch {
                    unsaved[entry.name] = describe(error)
                }
            }
            var results = runs.map(\.result)
            for i in results.indices {
                guard let reason = unsaved[results[i].board] else { continue }
                results[i].error =
                    "the simulated board's flash could not be saved (\(reason)); the next run finds it as it was "
                    + "before this one"
                results[i].failureKind = .unwritable
                // The flash is lost with the file: a failure, as the result schema says of one with an error.
                results[i].verified = false
                results[i].verification = .failed
                results[i].verificationNote = nil
            }
            if let kill { results = results.map { $0.error == nil ? $0 : Self.killed($0, at: kill) } }
            for ((entry, run), result) in zip(zip(ids, runs), results) where unsaved[entry.name] == nil {
                flasher.keepRecords(
                    of: entry.name, checkpoint: checkpoints[entry.name], result: result, session: run.outcome
                ) { StdErr.write("bitflash: warning: \($0)\n") }
            }
            // The boards share one run, so one trace holds every board's lines, each with its name.
            if let first = runs.first {
                Verbose.dump(first.trace, names: names)
                if let trace = output.trace {
                    let text = try TraceFile.encode(
                        first.trace, names: names,
                        header: traceHeader(profile: profile, plans: ids.map { ($0.name, $0.plan.resume) }),
                        results: results.map { ($0.board, TraceResult($0)) }, full: output.verbose > 0)
                    try OutputFile.write(
                        [UInt8](text), to: trace, what: "the trace", inputs: [file] + (dfuImage.map { [$0] } ?? []))
                }
            }
            if sim.adapters.count > 1 {
                for (entry, run) in zip(ids, runs) {
                    identities[entry.name]?.adapter = Flasher.adapterName(sim, run.adapter)
                }
            }
            for r in results { out.result(r) }
            out.finish(results, identities: identities)
            if !dryRun {
                recordClassRun(results, identities: identities)
            }
            return .flashed(results)
        }
    }
}
