import Diagnostics
import FirmwareImage
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
            let profile = simulation.profile(simulate, store: store, name: names[0])
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
            let resume = FileResumeStore(simulated: store)
            var ids: [(plan: FlashPlan, board: BoardID, name: String)] = []
            for (i, name) in names.enumerated() {
                ids.append(
                    (
                        withResume(plan, board: name, store: resume),
                        sim.addBoard(
                            try store.loadOrCreate(name, profile: profile, index: Int(name.dropFirst(4)) ?? i + 1)),
                        name
                    ))
            }
            // The boards share the simulated adapters, each within its connection limit; each board's
            // path is read from it first (a dry run on a copy of the boards), as its session decides.
            let preview =
                names.count > 1
                ? ClassPreview.make(
                    plan: plan, options: options(), boards: try Self.expected(ids, options: options(), in: sim),
                    link: sim.link,
                    adapters: sim.adapters.indices.map {
                        .init(
                            name: "hci\($0) (\(sim.adapters[$0].name))",
                            connectionLimit: AdapterProfile.limit(sim.connectionLimit(of: $0)))
                    }) : nil
            if dryRun {
                if let preview { StdOut.write((output.json ? try JSONText.line(preview) : preview.line) + "\n") }
                let runs = SimulatedFlash.runAll(ids, options: options(), in: &sim)
                for (entry, _) in zip(ids, runs) { try store.save(sim.board(entry.board), as: entry.name) }
                return .planned(try printPlans(zip(names, runs.map(\.outcome)).map { ($0, $1) }))
            }
            let out = SharedOutput((makeOutput ?? Output.make)(output.mode, names, output.verbose))
            if let preview { out.classEstimate(preview) }
            let kill = simulation.killAt.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
            // Each board's latest checkpoint, kept only once the board itself is saved: a record
            // never claims more than the board's file holds, whenever this run is stopped.
            let checkpoints = Mutex<[String: ResumePoint?]>([:])
            let runs = SimulatedFlash.runAll(
                ids, options: options(), in: &sim, deadline: kill ?? SimulatedFlash.defaultDeadline,
                onEvent: { event in
                    if case let .checkpoint(point) = event.report { checkpoints.withLock { $0[event.board] = point } }
                    out.event(event)
                })
            // A board whose file cannot be saved still gets its result, which says so (73).
            var unsaved: [String: String] = [:]
            for (entry, run) in zip(ids, runs) {
                do {
                    try store.save(sim.board(entry.board), as: entry.name)
                } catch {
                    unsaved[entry.name] = describe(error)
                    continue
                }
                if let point = checkpoints.withLock({ $0[entry.name] }) {
                    Self.keep(point, board: entry.name, in: resume)
                }
                resume.keepFinish(after: run.outcome, board: entry.name) { StdErr.write("bitflash: warning: \($0)\n") }
            }
            var results = runs.map(\.result)
            for i in results.indices {
                guard let reason = unsaved[results[i].board] else { continue }
                results[i].error =
                    "the simulated board's flash could not be saved (\(reason)); the next run finds it as it was "
                    + "before this one"
                results[i].exitStatus = .cannotWrite
                // The flash is lost with the file: a failure, as the result schema says of one with an error.
                results[i].verified = false
                results[i].verification = .failed
                results[i].verificationNote = nil
            }
            if let kill { results = results.map { $0.error == nil ? $0 : Self.killed($0, at: kill) } }
            Self.forgetFinished(results, in: resume)
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
            var identities: [String: BoardIdentity] = [:]
            for entry in ids {
                let profile = try sim.board(entry.board).profile
                identities[entry.name] = BoardIdentity(name: profile.name, address: profile.address)
            }
            if sim.adapters.count > 1 {
                for (entry, run) in zip(ids, runs) {
                    identities[entry.name]?.adapter = "hci\(run.adapter) (\(sim.adapters[run.adapter].name))"
                }
            }
            for r in results { out.result(r) }
            out.finish(results, identities: identities)
            if !dryRun {
                recordClassRun(results, identities: identities, folder: ClassRunRecord.simulatedFolder(store))
            }
            return .flashed(results)
        }
    }

    /// What each board of a simulated class is expected to do: a dry run of every board on a copy
    /// of the simulation (their memory maps read, their decisions made, nothing written).
    static func expected(
        _ boards: [(plan: FlashPlan, board: BoardID, name: String)], options: FlashOptions, in sim: Simulation
    ) throws -> [ExpectedBoard] {
        var copy = sim
        var dry = options
        dry.dryRun = true
        let runs = SimulatedFlash.runAll(boards, options: dry, in: &copy)
        return try zip(boards, runs).map { entry, run in
            let runsProgram = try sim.board(entry.board).mode == .application
            guard case let .success(outcome) = run.outcome else {
                return ExpectedBoard(path: .partial, runsProgram: runsProgram)
            }
            if outcome.path == .upToDate { return ExpectedBoard(path: nil, runsProgram: runsProgram) }
            return ExpectedBoard(path: outcome.decision?.chosen ?? .partial, runsProgram: runsProgram)
        }
    }
}
