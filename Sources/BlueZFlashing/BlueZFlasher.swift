import BlueZTransport
import FirmwareImage
import Flashing
import Foundation
import PartialFlashingFrames
import Synchronization
import Transport

/// Flashes real micro:bit and Calliope mini boards through BlueZ: the library behind
/// `bitflash scan` and `bitflash flash --device`.
///
/// For each board it finds and connects to it, learns what it is (its memory map, or the
/// full-update service it offers), plans the file for it, continues an interrupted partial
/// flash from its resume record, and runs the session: only the changed program when it can,
/// a full update (McuMgr, or Nordic DFU on stock boards, also for a board found in its
/// bootloader) otherwise.
///
/// ```swift
/// let firmware = try Firmware.parse(bytes, fileName: "counter.hex")
/// for await update in BlueZFlasher().flash(firmware, on: ["zotig"]) {
///     switch update {
///     case .event(let e): if case let .progress(done, total, _) = e.report { print("\(done)/\(total)") }
///     case .warning(_, let message): print("warning: \(message)")
///     case .finished(let r): print(r.result.error ?? "done: \(r.result.path?.rawValue ?? "-")")
///     }
/// }
/// ```
public struct BlueZFlasher: Sendable {
    /// How boards are found, connected and flashed.
    public var settings: BlueZFlashSettings

    /// A flasher with `settings` (by default the command line's).
    public init(settings: BlueZFlashSettings = BlueZFlashSettings()) {
        self.settings = settings
    }

    /// The adapters a class would be flashed through: `settings.adapters` with `all` resolved
    /// to every adapter switched on (nil: the first adapter switched on).
    public func adapters() async throws -> [String?] {
        try await AdapterSlots.resolve(settings.adapters, settings: settings)
    }

    /// Flashes `firmware` onto each board `boards` names (an address or a name), each on a
    /// connection of its own: at most `settings.maxConnectionsPerAdapter` at once per adapter,
    /// the next board starting when one finishes, on the adapter that freed up (`AdapterSlots`).
    public func flash(_ firmware: Firmware, on boards: [String]) -> FlashUpdates {
        let settings = self.settings
        return FlashUpdates { channel in
            let names: [String?]
            do { names = try await AdapterSlots.resolve(settings.adapters, settings: settings) } catch {
                for query in boards {
                    let result = FlashResult(board: query, unreached: error, seconds: 0)
                    channel.send(.finished(BoardFlashResult(result: result, address: nil, name: nil)))
                }
                return
            }
            let slots = AdapterSlots(names, limit: settings.maxConnectionsPerAdapter)
            let claims = BoardClaims()
            let classStart = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for query in boards {
                    group.addTask {
                        let result = await Self.flashInTurn(
                            query, firmware: firmware, settings: settings, slots: slots, claims: claims,
                            channel: channel, classStart: classStart)
                        channel.send(.finished(result))
                    }
                }
            }
        }
    }

    /// Backing off from a controller out of connections: bleak-retry-connector waits 4 s when it
    /// suspects the adapter is out of slots (`calculate_backoff_time`).
    static let outOfConnectionsBackOff: Duration = .seconds(4)
    /// A board backs off at most this often; then a refusal is its own failure (a board that
    /// keeps failing to connect must not bring the whole class down to one at a time).
    static let maxBackOffs = 3

    /// One board's flash once its adapter has room; a connect refused for want of connections
    /// while other boards are connected gives the slot back, lowers the adapter's limit, waits
    /// and takes the next free slot (never a failure of the board).
    static func flashInTurn(
        _ query: String, firmware: Firmware, settings: BlueZFlashSettings, slots: AdapterSlots,
        claims: BoardClaims? = nil, channel: UpdateChannel, classStart: ContinuousClock.Instant
    ) async -> BoardFlashResult {
        var backOffs = 0
        while true {
            let mayBackOff = backOffs < maxBackOffs
            let a = await slots.take()
            if Task.isCancelled {
                // Stopped while it waited for a connection: it was never started.
                await slots.give(a)
                let error = BoardFlashError.cancelled(resumable: false)
                return BoardFlashResult(
                    result: FlashResult(board: query, unreached: error, seconds: 0), address: nil, name: nil)
            }
            var s = settings
            s.adapter = await slots.name(a)
            let adapterName = s.adapter ?? "the adapter"
            let outcome = await flashOne(
                query, firmware: firmware, settings: s, claims: claims, channel: channel, started: classStart
            ) { error in
                let refused = AdapterSlots.isRefusedForWantOfConnections(error)
                guard mayBackOff, AdapterSlots.isOutOfConnections(error),
                    await slots.backOff(a, lowersLimit: refused)
                else { return false }
                let limit = await slots.limit(a)
                channel.send(
                    .warning(
                        board: query,
                        message: refused
                            ? "\(adapterName) refused another connection (\(error)); keeping \(limit) "
                                + "board\(limit == 1 ? "" : "s") connected through it and trying again"
                            : "the connection through \(adapterName) was given up (\(error)); waiting for "
                                + "another board to finish and trying again"))
                try? await Task.sleep(for: outOfConnectionsBackOff)
                return true
            }
            guard var result = outcome else {
                backOffs += 1
                continue
            }
            await slots.give(a)
            if await slots.count > 1 { result.adapter = s.adapter }
            // Refused for want of connections to the end: say so, with what helps.
            if let message = result.result.error, result.address == nil,
                AdapterSlots.isRefusedForWantOfConnections(message)
            {
                let error = BoardFlashError.adapterFull(adapter: adapterName, message: message)
                var changed = result
                changed.result = FlashResult(board: query, unreached: error, seconds: result.result.seconds)
                changed.adapter = result.adapter
                return changed
            }
            return result
        }
    }

    /// One board's whole flash; never throws: a failure is the result's error. Nil when the
    /// connect failed and `connectRefused` took it as a reason to try again later.
    /// - Parameter started: when the board's time starts: the class's start, so that a board's
    ///   time includes its wait for a connection, as a simulated class counts it.
    static func flashOne(
        _ query: String, firmware: Firmware, settings: BlueZFlashSettings, claims: BoardClaims? = nil,
        channel: UpdateChannel, started: ContinuousClock.Instant = .now,
        connectRefused: @Sendable (any Error) async -> Bool = { _ in false }
    ) async -> BoardFlashResult? {
        let clock = ContinuousClock()
        func elapsed() -> Double { started.duration(to: clock.now).seconds }
        func unreached(_ error: any Error, address: String? = nil, name: String? = nil) -> BoardFlashResult {
            let error = Task.isCancelled ? BoardFlashError.cancelled(resumable: false) : error
            return BoardFlashResult(
                result: FlashResult(board: query, unreached: error, seconds: elapsed()), address: address, name: name)
        }
        channel.send(.event(FlashEvent(board: query, elapsed: .zero, report: .phase(.connecting))))
        let board: BlueZBoard
        do { board = try await BlueZBoard.connect(query, settings: settings) } catch {
            if !Task.isCancelled, await connectRefused(error) { return nil }
            return unreached(error)
        }
        let key = board.device.address
        if let other = claims?.claim(key, by: query) {
            // Another query's board: its link is that query's while its session runs.
            if !other.holdsLink { await closeOutsideCancellation(board) }
            return unreached(BoardFlashError.sameBoard(address: key, flashedAs: other.query), address: key)
        }
        let trace: @Sendable (FlowReport, Duration) -> Void = { report, t in
            if case .trace = report { channel.send(.event(FlashEvent(board: query, elapsed: t, report: report))) }
        }
        var plan: FlashPlan
        let kind: Board
        do {
            let detected = try await board.detect(onReport: trace)
            kind = detected.board
            plan = try makePlan(firmware, for: detected, settings: settings) {
                channel.send(.warning(board: query, message: $0))
            }
        } catch {
            await closeOutsideCancellation(board)
            claims?.released(key)
            return unreached(error, address: key, name: board.device.name)
        }
        let dryRun = settings.options.dryRun
        let records =
            dryRun ? nil : settings.resumeStore.map { ResumeRecords(store: $0, startOver: settings.startOver) }
        if let records { plan = records.plan(plan, board: key) { channel.send(.warning(board: query, message: $0)) } }
        let session: Result<SessionOutcome, any Error>
        let unfinished = Mutex(false)
        let meter = ProgressRateMeter()
        // Kept after the run: a failed session's result says what it did before it failed.
        var flow = SessionFlow(plan: plan, options: settings.options)
        do {
            session = .success(
                try await board.run(&flow) { report, t in
                    if case let .checkpoint(checkpoint) = report {
                        let point = checkpoint?.resumePoint
                        unfinished.withLock { $0 = point != nil }
                        do {
                            try records?.keep(point, board: key)
                        } catch {
                            channel.send(.warning(board: query, message: "\(error)"))
                        }
                    }
                    channel.send(.event(meter.event(board: query, elapsed: t, report: report)))
                })
        } catch {
            session = .failure(
                Task.isCancelled ? BoardFlashError.cancelled(resumable: unfinished.withLock { $0 }) : error)
        }
        let hint = board.failureHint
        if Task.isCancelled, unfinished.withLock({ $0 }) { await restartInPairingMode(board) }
        await closeOutsideCancellation(board)
        claims?.released(key)
        var result = FlashResult(board: query, outcome: session, seconds: elapsed(), progress: flow.progress)
        records?.finish(result, session: session, board: key) { channel.send(.warning(board: query, message: $0)) }
        if let error = result.error, let hint, !Task.isCancelled { result.error = "\(error); \(hint)" }
        if result.error == nil, !dryRun, let last = settings.lastBoard {
            do { try last.save(LastFlashedBoard(address: key, name: board.device.name)) } catch {
                channel.send(.warning(board: query, message: "\(error)"))
            }
        }
        var flashed = BoardFlashResult(result: result, address: key, name: board.device.name, session: session)
        flashed.kind = kind
        return flashed
    }

    /// The plan for a detected board, by the library's policy (`FlashPolicy`) with the
    /// settings' `plan`: a file the policy refuses is refused here as on every front door.
    static func makePlan(
        _ firmware: Firmware, for detected: DetectedBoard, settings: BlueZFlashSettings, warn: (String) -> Void
    ) throws -> FlashPlan {
        try FlashPolicy.plan(
            firmware, for: detected.board, described: detected.description, settings: settings.plan, warn: warn)
    }

    /// A partial flash stopped in the middle: restart the board in pairing mode (`FF 00`,
    /// CODAL `restartInBLEMode`). It stays there (the unfinished write keeps it in pairing mode
    /// at every boot), and it reads its memory map afresh at that boot: CODAL computes the
    /// region hashes at boot (`MicroBitMemoryMap`), so only after it does the board show what
    /// the unfinished write left, which is what its resume record expects. The write is safe
    /// whenever it arrives: the record continues at a block that opens a page, which the board
    /// erases again.
    ///
    /// The link is closed only once the board has dropped it by resetting (or after a few
    /// seconds without that): a next flash must not connect before the reset and lose its link to it.
    static func restartInPairingMode(_ board: BlueZBoard) async {
        await Task {
            let drops = board.transport.disconnects()
            do {
                try await board.transport.write(
                    PartialFlashingRequest.reset(.pairing).bytes, to: PartialFlashingGATT.characteristic,
                    kind: .command, timeout: .seconds(2))
            } catch {
                return
            }
            let reset = Task { for await _ in drops { return } }
            let limit = Task {
                try? await Task.sleep(for: .seconds(5))
                reset.cancel()
            }
            await reset.value
            limit.cancel()
        }.value
    }

    /// Closes the board's link even when the flash was cancelled (a cancelled task's D-Bus
    /// calls would fail at once and leave the link up).
    static func closeOutsideCancellation(_ board: BlueZBoard) async {
        await Task { await board.close() }.value
    }
}
