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

    /// Flashes `firmware` onto each board `boards` names (an address or a name), all at once,
    /// each on a connection of its own.
    public func flash(_ firmware: Firmware, on boards: [String]) -> FlashUpdates {
        let settings = self.settings
        return FlashUpdates { channel in
            await withTaskGroup(of: Void.self) { group in
                for query in boards {
                    group.addTask {
                        let result = await Self.flashOne(
                            query, firmware: firmware, settings: settings, channel: channel)
                        channel.send(.finished(result))
                    }
                }
            }
        }
    }

    /// One board's whole flash; never throws: a failure is the result's error.
    static func flashOne(
        _ query: String, firmware: Firmware, settings: BlueZFlashSettings,
        channel: UpdateChannel
    ) async -> BoardFlashResult {
        let clock = ContinuousClock()
        let started = clock.now
        func elapsed() -> Double { started.duration(to: clock.now).seconds }
        func unreached(_ error: any Error, address: String? = nil, name: String? = nil) -> BoardFlashResult {
            let error = Task.isCancelled ? BoardFlashError.cancelled(resumable: false) : error
            return BoardFlashResult(
                result: FlashResult(board: query, unreached: error, seconds: elapsed()), address: address, name: name)
        }
        channel.send(.event(FlashEvent(board: query, elapsed: .zero, report: .phase(.connecting))))
        let board: BlueZBoard
        do { board = try await BlueZBoard.connect(query, settings: settings) } catch { return unreached(error) }
        let key = board.device.address
        let trace: @Sendable (FlowReport, Duration) -> Void = { report, t in
            if case .trace = report { channel.send(.event(FlashEvent(board: query, elapsed: t, report: report))) }
        }
        var plan: FlashPlan
        do {
            plan = try makePlan(firmware, for: try await board.detect(onReport: trace), settings: settings)
        } catch {
            await closeOutsideCancellation(board)
            return unreached(error, address: key, name: board.device.name)
        }
        let dryRun = settings.options.dryRun
        let store = dryRun ? nil : settings.resumeStore
        if let store {
            plan.resume = resumeRecord(of: key, in: store, settings: settings) {
                channel.send(.warning(board: query, message: $0))
            }
        }
        let session: Result<SessionOutcome, any Error>
        let unfinished = Mutex(false)
        let meter = ProgressRateMeter()
        do {
            session = .success(
                try await board.run(SessionFlow(plan: plan, options: settings.options)) { report, t in
                    if case let .checkpoint(point) = report {
                        unfinished.withLock { $0 = point != nil }
                        do {
                            if let point { try store?.save(point, board: key) } else { try store?.forget(board: key) }
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
        var result = FlashResult(board: query, outcome: session, seconds: elapsed())
        // A board not read back keeps its record: its END_OF_TRANSMISSION may not have arrived.
        if result.error == nil, result.verification != .unverified, let store {
            do { try store.forget(board: key) } catch { channel.send(.warning(board: query, message: "\(error)")) }
        }
        if let error = result.error, let hint, !Task.isCancelled { result.error = "\(error); \(hint)" }
        return BoardFlashResult(result: result, address: key, name: board.device.name, session: session)
    }

    /// The plan for a detected board: the settings' planner, else `FlashPlan.make` for the
    /// board asked for (which must be of the detected family) or the detected one.
    static func makePlan(_ firmware: Firmware, for detected: DetectedBoard, settings: BlueZFlashSettings) throws
        -> FlashPlan
    {
        if let planner = settings.planner { return try planner(firmware, detected) }
        var target = detected.board
        if let asked = settings.board {
            guard asked.family == target.family else {
                throw BoardFlashError.boardMismatch(requested: asked, detected: target, board: detected.description)
            }
            target = asked
        }
        do {
            return try FlashPlan.make(firmware: firmware, board: target, dfuImage: settings.dfuImage)
        } catch let error as FirmwareImageError {
            throw BoardFlashError.firmwareNotForBoard(message: "\(firmware.fileName): \(error.message)", board: target)
        }
    }

    /// The resume record of `key`, or nil (none, starting over, or unreadable: reported, never trusted).
    static func resumeRecord(
        of key: String, in store: any ResumeRecordStore, settings: BlueZFlashSettings,
        warn: (String) -> Void
    ) -> ResumePoint? {
        do {
            if settings.startOver {
                try store.forget(board: key)
                return nil
            }
            return try store.load(board: key)
        } catch {
            warn("\(error)")
            return nil
        }
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
                    PartialFlashingRequest.reset(.pairing).bytes, to: KnownGATT.partialFlashing,
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
