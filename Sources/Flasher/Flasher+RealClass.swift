import BlueZFlashing
import FirmwareImage
import Flashing
import LinkModel

/// The class forecast for real boards: each board's own decision, read before the class starts.
extension Flasher {
    /// The forecast of a class of the real boards `queries` before it starts, from each board's
    /// own decision: a dry run of every board first (connected, its memory map read, its path
    /// decided as its session will decide it, nothing written, the board left as it was found),
    /// as a simulated class reads its boards (`expected`). A board the dry run cannot reach is
    /// expected to take the path every board would be assumed to take without it
    /// (`ClassForecast.expectedPath`).
    ///
    /// The estimate is for boards of the kind `plan.board` names, or of the first kind the file
    /// fits (named in `assumes`), over BlueZ's default 30 ms link (what a board gets until its
    /// own request for 10-20 ms is granted, so the forecast leans long), through the adapters the
    /// flash will use with their connection limit each. Nil for one board, for another backend,
    /// or when no kind fits.
    public func forecastRealClass(_ firmware: Firmware, boards queries: [String]) async -> ClassForecast? {
        guard queries.count > 1, let bluez else { return nil }
        let kinds: [Board] =
            (plan.board.map { [$0] } ?? []) + [.microbitV2, .calliopeMini3, .microbitV1, .calliopeMini2, .calliopeMini1]
        guard let kind = kinds.first(where: { firmware.problems(for: $0).isEmpty }),
            let plan = try? plan(firmware, for: kind, described: kind.displayName)
        else { return nil }
        // An adapter that cannot be resolved here fails the flash itself, with its message.
        guard let names = try? await bluez.adapters() else { return nil }
        let limit = bluez.settings.maxConnectionsPerAdapter
        let adapters = names.map { ClassEstimator.Adapter(name: $0 ?? "the first adapter", connectionLimit: limit) }
        let assumed = ExpectedBoard(
            path: ClassForecast.expectedPath(plan: plan, options: options, mcuboot: nil).path, runsProgram: true)
        let read = await readBoards(firmware, queries)
        guard
            var forecast = ClassForecast.make(
                plan: plan, options: options, boards: queries.map { read[$0] ?? assumed }, link: .linuxDefault,
                adapters: adapters)
        else { return nil }
        let unread = queries.filter { read[$0] == nil }.count
        if unread > 0 {
            forecast.assumes +=
                "; \(unread) board\(unread == 1 ? "" : "s") could not be read first, "
                + "assumed to take \(assumed.path?.rawValue ?? "-")"
        }
        forecast.assumes += "; every board a \(kind.displayName)"
        return forecast
    }

    /// What each board of `queries` is expected to do, by a dry run of each (the boards the dry
    /// run reached and decided for; a board up to date has no path).
    func readBoards(_ firmware: Firmware, _ queries: [String]) async -> [String: ExpectedBoard] {
        var dry = self
        dry.options.dryRun = true
        guard let flasher = dry.bluez else { return [:] }
        var read: [String: ExpectedBoard] = [:]
        for await update in flasher.flash(firmware, on: queries) {
            guard case let .finished(result) = update, case let .success(outcome)? = result.session else { continue }
            read[result.board] = Self.expected(outcome)
        }
        return read
    }

    /// What a board's dry run says it will do: its path (a board found in its Nordic bootloader
    /// takes Nordic DFU), and whether it runs its program: `runsProgram` when known, else whether
    /// its partial estimate restarts it in pairing mode first (assumed when nothing says).
    static func expected(_ outcome: SessionOutcome, runsProgram known: Bool? = nil) -> ExpectedBoard {
        let partial = outcome.decision?.estimates.first { $0.path == .partial }
        let runsProgram =
            known ?? partial.map { $0.parts.contains { $0.name == PartialEstimator.pairingModeRestart } } ?? true
        if outcome.path == .upToDate { return ExpectedBoard(path: nil, runsProgram: runsProgram) }
        let fallback: EstimatedPath = outcome.path == .full ? .nordicDFU : .partial
        return ExpectedBoard(path: outcome.decision?.chosen ?? fallback, runsProgram: runsProgram)
    }
}
