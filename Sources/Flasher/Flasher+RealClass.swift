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
    /// Each board is estimated as the kind of board the dry run found it to be (a V1 and a V2 take
    /// different parts of a universal hex, at different flash speeds), or the kind `plan.board`
    /// names; a board the dry run cannot reach is taken to be of the first kind the file fits
    /// (the kinds are counted in `kinds` and named in `assumes`), over BlueZ's default 30 ms link (what a board gets until its
    /// own request for 10-20 ms is granted, so the forecast leans long), through the adapters the
    /// flash will use with their connection limit each. Nil for one board, for another backend,
    /// or when no kind fits.
    public func forecastRealClass(_ firmware: Firmware, boards queries: [String]) async -> ClassForecast? {
        guard queries.count > 1, let bluez else { return nil }
        let kinds: [Board] =
            (plan.board.map { [$0] } ?? []) + [.microbitV2, .calliopeMini3, .microbitV1, .calliopeMini2, .calliopeMini1]
        guard let assumedKind = kinds.first(where: { firmware.problems(for: $0).isEmpty }),
            let assumedPlan = try? plan(firmware, for: assumedKind, described: assumedKind.displayName)
        else { return nil }
        // An adapter that cannot be resolved here fails the flash itself, with its message.
        guard let names = try? await bluez.adapters() else { return nil }
        let limit = bluez.settings.maxConnectionsPerAdapter
        let adapters = names.map { ClassEstimator.Adapter(name: $0 ?? "the first adapter", connectionLimit: limit) }
        let assumed = ExpectedBoard(
            path: ClassForecast.expectedPath(plan: assumedPlan, options: options, mcuboot: nil).path,
            runsProgram: true)
        let read = await readBoards(firmware, queries)
        // Each board with the plan for the kind it was found to be (`plan.board` overrides it, as
        // it does for the flash); a board not read is taken to be of the assumed kind.
        var plans: [Board: FlashPlan] = [assumedKind: assumedPlan]
        var boards: [(plan: FlashPlan, expected: ExpectedBoard)] = []
        var counted: [Board: Int] = [:]
        for query in queries {
            let kind = plan.board ?? read[query]?.kind ?? assumedKind
            if plans[kind] == nil { plans[kind] = try? plan(firmware, for: kind, described: kind.displayName) }
            guard let kindPlan = plans[kind] else { return nil }
            boards.append((kindPlan, read[query]?.expected ?? assumed))
            counted[kind, default: 0] += 1
        }
        guard
            var forecast = ClassForecast.make(boards: boards, options: options, link: .linuxDefault, adapters: adapters)
        else { return nil }
        forecast.kinds = Dictionary(uniqueKeysWithValues: counted.map { ($0.key.displayName, $0.value) })
        let unread = queries.filter { read[$0] == nil }.count
        if unread > 0 {
            forecast.assumes +=
                "; \(unread) board\(unread == 1 ? "" : "s") could not be read first, "
                + "assumed to be a \(assumedKind.displayName) taking \(assumed.path?.rawValue ?? "-")"
        }
        if counted.count == 1, let only = counted.keys.first {
            forecast.assumes += "; every board a \(only.displayName)"
        } else {
            let order = kinds.filter { counted[$0] != nil }
            forecast.assumes += "; " + order.map { "\(counted[$0]!) \($0.displayName)" }.joined(separator: ", ")
        }
        return forecast
    }

    /// What each board of `queries` is expected to do, by a dry run of each (the boards the dry
    /// run reached and decided for; a board up to date has no path), and the kind it was found to be.
    func readBoards(_ firmware: Firmware, _ queries: [String]) async -> [String: (
        expected: ExpectedBoard, kind: Board?
    )] {
        var dry = self
        dry.options.dryRun = true
        guard let flasher = dry.bluez else { return [:] }
        var read: [String: (expected: ExpectedBoard, kind: Board?)] = [:]
        for await update in flasher.flash(firmware, on: queries) {
            guard case let .finished(result) = update, case let .success(outcome)? = result.session else { continue }
            read[result.board] = (Self.expected(outcome), result.kind)
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
