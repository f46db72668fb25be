import BlueZTransport
import Diagnostics
import FirmwareImage
import Flashing
import Foundation
import Transport

/// `bitflash flash FILE --device ADDR|NAME` (repeatable) and `--all-in-range`: real boards over
/// BlueZ. Each board gets its own bus connection and runs `SessionFlow` through
/// `AsyncFlowDriver` on the real clock, reported like a simulated flash (progress lines, JSON
/// events, one result per board and, for several boards, the summary table).
extension FlashCommand {
    /// - Parameter only: the boards to flash (`--retry-failed`), instead of --device or --all-in-range.
    func runOnDevices(_ only: [String]? = nil, firmware given: Firmware?, output makeOutput: OutputMaker) async throws -> BoardsRun {
        Verbose.bootstrap(output.verbose)
        let firmware = try given ?? FirmwareFileLoading.loadForFlash(file)
        let queries: [String]
        if let only { queries = only } else { queries = allInRange ? try await boardsInRange() : devices }
        // A dry run prints plans, not progress and results.
        let out = SharedOutput(dryRun ? SilentOutput() : makeOutput(output.mode, queries, output.verbose))
        typealias Flashed = (Int, FlashResult, Result<SessionOutcome, any Error>?, BoardIdentity?)
        let outcomes = await withTaskGroup(of: Flashed.self) { group in
            for (index, query) in queries.enumerated() {
                group.addTask {
                    let (result, outcome, identity) = await flashOne(query, firmware: firmware, out: out)
                    return (index, result, outcome, identity)
                }
            }
            var all: [Flashed] = []
            for await outcome in group {
                if !dryRun { out.result(outcome.1) }
                all.append(outcome)
            }
            return all.sorted { $0.0 < $1.0 }
        }
        if dryRun {
            return .planned(try printPlans(outcomes.map { entry -> (board: String, outcome: Result<SessionOutcome, any Error>) in
                (entry.1.board, entry.2 ?? .failure(CLIError(entry.1.exitStatus, entry.1.error ?? "the board could not be reached")))
            }))
        }
        let results = outcomes.map(\.1)
        var identities: [String: BoardIdentity] = [:]
        for entry in outcomes { identities[entry.1.board] = entry.3 }
        out.finish(results, identities: identities)
        recordClassRun(results, identities: identities, folder: ClassRunRecord.realBoardsFolder)
        return .flashed(results)
    }

    /// The addresses of every flashable board a scan finds.
    private func boardsInRange() async throws -> [String] {
        let bus = try await BlueZBus.open()
        defer { bus.close() }
        let found = try await BlueZScanner(bus: bus, adapter: bluetooth.adapter).scan(timeout: .seconds(bluetooth.scanTimeout), services: nil)
            .filter(\.looksFlashable)
        guard !found.isEmpty else {
            throw CLIError(.boardNotFound, "no board in range after \(bluetooth.scanTimeout.formatted()) s; check they are "
                               + "powered and advertising (pairing mode: hold A+B, press reset)")
        }
        return found.map(\.address)
    }

    /// Flashes one board; never throws: a failure is the result's `error` and exit status.
    /// The session's outcome comes back too, when the session ran (a dry run prints it as a plan),
    /// and the board's name and address once it was found.
    private func flashOne(_ query: String, firmware: Firmware,
                          out: SharedOutput) async -> (FlashResult, Result<SessionOutcome, any Error>?, BoardIdentity?) {
        let clock = ContinuousClock()
        let started = clock.now
        var identity: BoardIdentity?
        func failed(_ error: any Error) -> (FlashResult, Result<SessionOutcome, any Error>?, BoardIdentity?) {
            (FlashResult(board: query, unreached: error, seconds: started.duration(to: clock.now).seconds), nil, identity)
        }
        out.event(FlashEvent(board: query, elapsed: .zero, report: .phase(.connecting)))
        let board: RealBoard
        do { board = try await RealBoard.connect(query, options: bluetooth) } catch {
            return failed(error)
        }
        identity = BoardIdentity(name: board.device.name, address: board.device.address)
        var plan: FlashPlan
        do {
            plan = try await self.plan(firmware, for: board, name: query)
        } catch {
            await board.close()
            return failed(error)
        }
        // An unfinished partial flash of this program to this board continues where it stopped
        // (the session checks the board's memory map against the record before it trusts it).
        let resume = ResumeStore.realBoards
        let key = board.device.address
        if !dryRun { plan = withResume(plan, board: key, store: resume) }
        let outcome: Result<SessionOutcome, any Error>
        do {
            outcome = .success(try await board.run(SessionFlow(plan: plan, options: options()), name: query) { report, t in
                if !dryRun, case let .checkpoint(point) = report {
                    do { try resume.save(point, board: key) } catch { StdErr.write("bitflash: warning: \(error)\n") }
                }
                out.event(FlashEvent(board: query, elapsed: t, report: report))
            })
        } catch {
            outcome = .failure(error)
        }
        let hint = board.transport.failureHint
        await board.close()
        var result = FlashResult(board: query, outcome: outcome, seconds: started.duration(to: clock.now).seconds)
        if result.error == nil, !dryRun { resume.forget(board: key) }
        if let error = result.error, let hint { result.error = "\(error); \(hint)" }
        return (result, outcome, identity)
    }

    /// The plan for this board: its family comes from its memory map when it offers partial
    /// flashing, else it is an MCUboot board (nRF52833).
    private func plan(_ firmware: Firmware, for board: RealBoard, name: String) async throws -> FlashPlan {
        var family = ChipFamily.nrf52833
        let mcumgr = board.connection.services.contains(KnownGATT.smpService)
        if board.connection.services.contains(KnownGATT.partialFlashingService) {
            do {
                family = RealBoard.family(of: try await board.memoryMap(name: name))
            } catch where mcumgr {
                // MCUboot boards are nRF52833; the session meets the problem again and falls back.
            }
        } else if !mcumgr {
            throw CLIError(.flashFailed, "\(board.device.label) offers neither partial flashing nor McuMgr; "
                               + "reset it into pairing mode (hold A+B, press reset) and try again")
        }
        let detected = RealBoard.guessBoard(family: family, name: board.device.name)
        return try makePlan(firmware, board: detected, described: "\(detected.displayName) \(board.device.label)")
    }
}
