import Diagnostics
import FirmwareImage
import Flashing
import NordicDFU
import NordicDFUFrames
import SimulatedBoard

/// One broken invariant of one campaign run.
public struct CampaignViolation: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The run's index in the campaign.
    public var run: Int
    /// Which invariant: `flash-differs`, `not-verified`, `boots-into-pairing-mode`,
    /// `unclear-error`, `not-repaired`, `deadline`, `retry-bound`, `write-outside-region`,
    /// `writes-per-word`.
    public var rule: String
    /// What was seen, with addresses and values.
    public var detail: String
    /// The scenario, enough to run it again.
    public var scenario: String

    public var description: String { "\(rule): \(detail) [\(scenario)]" }
}

/// The invariants every campaign run must keep, checked on the board's memory after the run.
///
/// - success (verified) ⇒ the board's flash holds the program, byte-exact over the written
///   region (the program region for partial flashing, the application region for a full
///   update); the board reports it (region 2, or the active primary slot); and it would boot into
///   application mode: its key-value page holds neither `flashIncomplete` nor `RebootMode`
///   (nor is it left in a Nordic bootloader);
/// - unverified (written, not read back) ⇒ a reason in words, and the flash holds the program;
///   it never counts as a success: the plain run that follows must read it back;
/// - failure ⇒ a clear error (a sentence, not a simulator error);
/// - no run reaches its (modelled) deadline;
/// - retries, reconnections and connection attempts stay within their configured bounds;
/// - no write lands outside the region the board declared (region 2 for partial flashing,
///   the primary slot when MCUboot swapped images);
/// - no word is written more often between two erases than the chip allows (nWRITE,
///   `FlashMemory.writesPerWordLimit`), on every path.
public enum CampaignInvariants {
    /// Checks a successful session's effect on `board`: a verified one by every rule, an
    /// unverified one by `checkUnverified`.
    public static func checkSuccess(_ outcome: SessionOutcome, plan: FlashPlan, board: SimulatedBoard) -> [(
        rule: String, detail: String
    )] {
        guard outcome.verified else { return checkUnverified(outcome, plan: plan, board: board) }
        var found = checkFlashHoldsTheProgram(outcome, plan: plan, board: board)
        if board.device.bootsIntoPairingMode {
            let keys = board.device.storage.keys.sorted().joined(separator: ", ")
            found.append(
                (
                    "boots-into-pairing-mode",
                    "a verified \(outcome.path.rawValue) result, but the board's key-value page "
                        + "holds \(keys): it starts in pairing mode at every boot"
                ))
        }
        switch outcome.path {
        case .partial, .upToDate:
            if let program = plan.program, let region = board.memoryMap.first(where: { $0.id == 2 }),
                region.hash != program.programHash
            {
                found.append(
                    (
                        "not-verified",
                        "region 2 reports program hash \(region.hash.hexString), expected \(program.programHash.hexString)"
                    ))
            }
        case .full:
            if let nordic = outcome.nordic {
                if board.inNordicBootloader || !board.nordicSettings.applicationValid {
                    found.append(
                        (
                            "not-verified",
                            "a Nordic DFU reported success (verified \(nordic.verified)), but the board is still in its bootloader"
                        ))
                }
                if let program = plan.program, let region = board.memoryMap.first(where: { $0.id == 2 }),
                    region.hash != program.programHash
                {
                    found.append(
                        (
                            "not-verified",
                            "after the Nordic DFU region 2 reports program hash \(region.hash.hexString), expected \(program.programHash.hexString)"
                        ))
                }
            } else if let expected = plan.fullImage?.hash {
                let active = outcome.full?.finalSlots.first { $0.slot == 0 && $0.active }
                if active?.hash != expected {
                    found.append(
                        (
                            "not-verified",
                            "the active primary slot reports hash \(active?.hash?.hexString ?? "none"), expected \(expected.hexString)"
                        ))
                }
                if plan.fullImageHoldsTheProgram, let program = plan.program,
                    let region = board.memoryMap.first(where: { $0.id == 2 }), region.hash != program.programHash
                {
                    found.append(
                        (
                            "not-verified",
                            "after the McuMgr update region 2 reports program hash \(region.hash.hexString), expected \(program.programHash.hexString)"
                        ))
                }
            }
        }
        return found
    }

    /// An unverified result (written, or found up to date, but not read back): it must say why
    /// in words, and the flash must hold the program.
    public static func checkUnverified(_ outcome: SessionOutcome, plan: FlashPlan, board: SimulatedBoard) -> [(
        rule: String, detail: String
    )] {
        var found = checkFlashHoldsTheProgram(outcome, plan: plan, board: board)
        let why = outcome.unverifiedReason ?? ""
        if why.filter({ !$0.isWhitespace }).count < 12 {
            found.append(("unclear-error", "an unverified result without a reason in words: '\(why)'"))
        }
        return found
    }

    /// The board's flash holds the file byte for byte where the path wrote it: the program region
    /// (partial flashing, up to date) or the application region (a full update).
    static func checkFlashHoldsTheProgram(_ outcome: SessionOutcome, plan: FlashPlan, board: SimulatedBoard) -> [(
        rule: String, detail: String
    )] {
        switch outcome.path {
        case .partial, .upToDate:
            guard let program = plan.program else {
                return [("flash-differs", "a \(outcome.path.rawValue) result without a MakeCode program")]
            }
            if let at = firstDifference(board, plan.image, program.region) {
                return [
                    (
                        "flash-differs",
                        "\(outcome.path.rawValue): flash differs from the image at \(Hex.number(at)) in the program region \(Hex.number(program.region.lowerBound))-\(Hex.number(program.region.upperBound))"
                    )
                ]
            }
        case .full:
            let layout = plan.family.layout
            if let end = plan.image.slice(layout.applicationStart..<layout.scratchPage).span?.upperBound,
                let at = firstDifference(board, plan.image, layout.applicationStart..<end)
            {
                return [
                    (
                        "flash-differs",
                        "full: flash differs from the image at \(Hex.number(at)) in the application region"
                    )
                ]
            }
        }
        return []
    }

    /// Checks that a failed session says what went wrong in words, and is no simulator error
    /// (a deadline, a stalled flow, a missing outcome).
    public static func checkFailure(_ error: any Error, message: String?) -> [(rule: String, detail: String)] {
        if let e = error as? SimulatedBoardError {
            switch e {
            case .deadlineExceeded, .flowStalled: return [("deadline", "the flow did not end by itself: \(e)")]
            default: return [("unclear-error", "a simulator error instead of a flash error: \(e)")]
            }
        }
        let text = message ?? ""
        if text.filter({ !$0.isWhitespace }).count < 12 {
            return [("unclear-error", "the error message is empty or too short: '\(text)'")]
        }
        return []
    }

    /// Checks the counters of a run against the limits of `options`.
    public static func checkBounds(_ outcome: SessionOutcome?, connections: Int, options: FlashOptions) -> [(
        rule: String, detail: String
    )] {
        var found: [(String, String)] = []
        let p = options.partial, m = options.mcumgr
        if let s = outcome?.partial {
            if s.retries > p.runRetryLimit {
                found.append(("retry-bound", "partial retries \(s.retries) > limit \(p.runRetryLimit)"))
            }
            // Reading the regions and writing each tolerate `reconnectLimit` link losses.
            if s.reconnects > 2 * p.reconnectLimit {
                found.append(("retry-bound", "partial reconnects \(s.reconnects) > 2 × limit \(p.reconnectLimit)"))
            }
        }
        if let f = outcome?.full {
            // McuMgr's budget is tied to progress (retries and disconnects without the upload
            // advancing); over a whole run only its ceilings bound the counts.
            if f.mostRetriesWithoutProgress > m.maximumRetriesWithoutProgress {
                found.append(
                    (
                        "retry-bound",
                        "McuMgr retried \(f.mostRetriesWithoutProgress) times without progress > limit \(m.maximumRetriesWithoutProgress)"
                    ))
            }
            if f.retries > m.maximumRetriesPerRun {
                found.append(("retry-bound", "McuMgr retries \(f.retries) > ceiling \(m.maximumRetriesPerRun)"))
            }
            if f.resumes > m.maximumDisconnectsPerRun {
                found.append(("retry-bound", "McuMgr resumes \(f.resumes) > ceiling \(m.maximumDisconnectsPerRun)"))
            }
        }
        let n = options.nordic
        if let d = outcome?.nordic, d.retries > n.retryLimit {
            found.append(("retry-bound", "Nordic DFU retries \(d.retries) > limit \(n.retryLimit)"))
        }
        // Every connection is the first one, a reboot the flow asked for, or a bounded reconnection;
        // reading the board back connects again after each page rewrite (and after FF 01).
        let readBacks = (p.pageRewriteLimit + 2) * (p.reconnectAttempts + p.reconnectLimit + 1)
        let partialConnections = (p.modeSwitchLimit + p.reconnectLimit + 2) * (p.reconnectAttempts + 1) + 2 * readBacks
        let fullConnections = (m.maximumDisconnectsPerRun + 3) * (m.reconnectAttempts + 1)
        let nordicConnections = (n.linkLossLimit + n.timeoutLimit + 3) * (n.reconnectAttempts + 1)
        let limit = 1 + partialConnections + fullConnections + nordicConnections
        if connections > limit { found.append(("retry-bound", "\(connections) connections > bound \(limit)")) }
        return found
    }

    /// Checks the flash write log of `after` (counters reset before the run): writes stay inside
    /// `declared` (the program region the board declared), or inside the primary slot when the
    /// SMP server swapped or reverted images during the run.
    public static func checkWrites(before: SimulatedBoard, after: SimulatedBoard, declared: Range<UInt32>) -> [(
        rule: String, detail: String
    )] {
        var allowed = declared
        var what = "the declared program region"
        if let server = after.smpServer {
            let was = before.smpServer?.statistics
            if server.statistics.swaps + server.statistics.reverts > (was?.swaps ?? 0) + (was?.reverts ?? 0) {
                allowed = server.configuration.primarySlot
                what = "the primary slot"
            }
        }
        if let erased = after.nordicStatistics?.pageErases, erased > (before.nordicStatistics?.pageErases ?? 0) {
            // A Nordic DFU ran: the bootloader takes the whole application up to its size limit.
            let family = after.profile.family
            let start = DFUApplication.range(for: family).lowerBound
            allowed = start..<(start + UInt32(DFUApplication.maximumSize(for: family)))
            what = "the application area the Nordic bootloader accepts"
        }
        let outside = after.flash.writeLog
            .filter { $0.lowerBound < allowed.lowerBound || $0.upperBound > allowed.upperBound }
            .prefix(3)
            .map {
                (
                    rule: "write-outside-region",
                    detail:
                        "a write to \(Hex.number($0.lowerBound))-\(Hex.number($0.upperBound)) outside \(what) \(Hex.number(allowed.lowerBound))-\(Hex.number(allowed.upperBound))"
                )
            }
        return Array(outside) + checkWritesPerWord(after)
    }

    /// Checks that no word of `board`'s flash was written more often between two erases of its
    /// page than the chip allows (`FlashMemory.writesPerWordLimit`, nWRITE), counted since the
    /// counters were reset before the run (the writes since the last erase carry over from
    /// earlier runs, so a word written in one run and twice in the next counts three times).
    public static func checkWritesPerWord(_ board: SimulatedBoard) -> [(rule: String, detail: String)] {
        let flash = board.flash
        guard flash.writesOverLimit > 0 else { return [] }
        let limit = FlashMemory.writesPerWordLimit
        let words = flash.writesSinceErase.filter { $0.value > limit }.keys.sorted()
        let at = words.first.map { " first at \(Hex.number($0)) (\(words.count) words still unerased)" } ?? ""
        return [
            (
                "writes-per-word",
                "\(flash.writesOverLimit) word writes past nWRITE = \(limit) between erases, up to "
                    + "\(flash.mostWritesPerWord) writes of one word;\(at)"
            )
        ]
    }

    /// The region 2 a board declares (its program region), or an empty range when it declares none.
    public static func declaredProgramRegion(of board: SimulatedBoard) -> Range<UInt32> {
        guard let r = board.memoryMap.first(where: { $0.id == 2 }), r.end > r.start else { return 0..<0 }
        return r.start..<r.end
    }

    /// The first address in `range` where the image has data and the flash differs from it
    /// (bytes the image leaves blank are not compared: an MCUboot image's trailer may follow it).
    static func firstDifference(_ board: SimulatedBoard, _ image: MemoryImage, _ range: Range<UInt32>) -> UInt32? {
        for segment in image.slice(range).segments {
            guard let flash = try? board.readFlash(segment.start..<segment.end) else { return segment.start }
            for (i, pair) in zip(flash, segment.bytes).enumerated() where pair.0 != pair.1 {
                return segment.start + UInt32(i)
            }
        }
        return nil
    }
}
