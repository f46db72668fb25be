import FirmwareImage
import Flashing
import LinkModel
import McuMgr
import NordicDFU
import PartialFlashing
import SimulatedFlashing
import SMP
import SimulatedBoard
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the flash benchmark: each scenario on a fresh simulated McuMgr board (partial
/// flashing kept beside SMP), over each link profile, with each strategy, and sets every
/// result beside its lower bound.
public enum BenchRunner {
    /// The strategies a scenario is run with: an up-to-date board only with auto (a forced
    /// full update of the same image is not what anyone would do); forced partial flashing only
    /// where it is possible (an edit).
    public static func strategies(for kind: BenchScenario.Kind) -> [BenchStrategy] {
        switch kind {
        case .upToDate: return [.auto]
        case .newRuntime: return [.auto, .fullReference, .fullBest]
        case .edit: return BenchStrategy.allCases
        }
    }

    /// Runs every scenario over every profile with its strategies.
    public static func runAll(
        _ scenarios: [BenchScenario], profiles: [LinkProfile],
        progress: ((BenchRun) -> Void)? = nil
    ) -> BenchReport {
        var runs: [BenchRun] = []
        for scenario in scenarios {
            for profile in profiles {
                for strategy in strategies(for: scenario.kind) {
                    let run = run(scenario, profile: profile, strategy: strategy)
                    progress?(run)
                    runs.append(run)
                }
            }
        }
        return BenchReport(runs: runs, notes: notes)
    }

    /// How the figures are made, for the report.
    public static let notes: [String] = [
        "Modelled time is RunStatistics.completionTime: from the start of the session until the board runs the new program (the partial-flashing board's reboot, the McuMgr confirm).",
        "Each run starts on a fresh simulated board that runs the scenario's first program in application mode with Bluetooth on (the partial-flashing service beside McuMgr SMP), as a MakeCode program with Bluetooth does. The session reads STATUS and both REGION_INFOs there and decides; only a partial write restarts the board in pairing mode first (FF 00), and that switch is in its bound: FF 00 in the event after the last answer (1 CI), the reboot (300 ms) with the RebootMode step of the boot (20 ms), a new connection setup, and STATUS and both REGION_INFOs again (6 CI).",
        "Partial bound: LowerBound.partial(blocks, pagesOpened) over the program's blocks (not the extra block that writes the program hash last) — connection setup, STATUS and two REGION_INFO round trips, 2 CI per block (plus the page erase rounded up to whole events for a block that opens a page the board erases: a CODAL board skips blank pages), END_OF_TRANSMISSION and the reboot — plus the switch to pairing mode, plus the read-back after the reboot (a new connection setup, then STATUS and REGION_INFO 2 in consecutive events, each answered in the next: 2 CI).",
        "Up-to-date bound: connection setup, STATUS and two REGION_INFO round trips; the board runs its program and is left untouched.",
        "Full bound: SMPServerConfiguration.lowerBound with the frame size the upload used: max(air time of the upload's LL packets at packetsPerEvent per CI, progressive erase + word writes) + two connection setups + state read, test, reset and confirm round trips + reset delay + reboot + MCUboot swap of both slots, plus the read-back of the program over partial flashing (STATUS and REGION_INFO 2, 2 CI on the same connection). An auto run that went full adds what it did first: the STATUS and REGION_INFO round trips (6 CI).",
        "Both full configurations reconnect as soon as the board advertises after the swap (estimatedSwapTime 0).",
        "Full (Nordic DFU) runs on a stock board (partial flashing and its Nordic bootloader, no SMP) with --mode full. Bound: LowerBound.nordicDFU — entry (setup, buttonless or DFU-control write, reboot, setup), the init command's round trips, per 4 KiB object the longer of its air path (Create, its answer in the first event after the page erase, which the board's radio sits out, its packets at packetsPerEvent per CI and no more than fit in an interval, the checksum and Execute) and its flash path (the page erase from the Create's event, the word writes, the Execute's answer after them) (Secure DFU), or one Start with the erase of the whole image, the init, the packets, Validate and Activate (legacy DFU); then the reset. The client's pacing by the bootloader's flash queue and its packet-receipt round trips are not in the bound; the estimate (NordicDFUEstimator) steps the flow with them.",
        "Host CPU is this thread's CPU time for the simulated session (CLOCK_THREAD_CPUTIME_ID)."
    ]

    /// One run.
    public static func run(_ scenario: BenchScenario, profile: LinkProfile, strategy: BenchStrategy) -> BenchRun {
        let family = scenario.board.family
        var row = BenchRun(
            scenario: scenario.name, kind: scenario.kind, board: scenario.board.displayName,
            profile: profile.name,
            connectionIntervalMilliseconds: Double(profile.connectionIntervalMicroseconds) / 1000,
            strategy: strategy, path: nil, reason: "failed", reasonMessage: "", modelledSeconds: 0,
            boundSeconds: 0, boundNote: "", bytesOnAir: 0, payloadBytes: 0, transfers: 0,
            transferUnit: "", retries: 0, hostCPUMilliseconds: 0, error: nil)
        let running: [UInt8]
        var plan: FlashPlan
        var sim = Simulation(link: profile)
        sim.recordsTrace = false
        let id: BoardID
        do {
            let start = try FlashPlan.make(firmware: scenario.running, board: scenario.board)
            guard let app = start.fullImage else {
                throw FlashError.noFullImage(reason: FlashReason(code: "bench", message: "no application"))
            }
            running = app.bytes
            plan = try FlashPlan.make(firmware: scenario.update, board: scenario.board)
            // "The same file again": this computer finished it on the board, so the board keeps
            // running (without that record it would be confirmed by a restart).
            if scenario.kind == .upToDate, let program = plan.program {
                plan.finished = FinishRecord(
                    board: scenario.name, programHash: program.programHash.hexString, finishedAt: "the bench")
            }
            if strategy == .nordic {
                let profile = SimulatedBoard.stockProfile(scenario.board)
                id = sim.addBoard(
                    try SimulatedBoard(profile: profile, image: scenario.running.image(for: scenario.board)))
            } else {
                id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(scenario.board, primary: running))
            }
        } catch {
            row.error = String(describing: error)
            return row
        }
        try? sim.updateBoard(id) { $0.resetFlashCounters() }
        let cpuBefore = threadCPUNanoseconds()
        let flash = SimulatedFlash.run(plan: plan, options: strategy.options, on: id, named: scenario.name, in: &sim)
        row.hostCPUMilliseconds = Double(threadCPUNanoseconds() - cpuBefore) / 1e6
        let stats = flash.statistics
        row.modelledSeconds = stats.completionTime.seconds
        row.bytesOnAir = stats.centralBytes + stats.peripheralBytes
        row.reason = flash.result.reason.code
        row.reasonMessage = flash.result.reason.message
        row.error = flash.result.error
        row.retries = flash.result.retries
        row.payloadBytes = flash.result.bytesSent
        guard case let .success(outcome) = flash.outcome else { return row }
        row.path = outcome.path.rawValue
        if let decision = outcome.decision, outcome.path != .upToDate, let chosen = decision.chosenEstimate {
            row.estimatedSeconds = chosen.seconds
            row.estimateError =
                row.modelledSeconds > 0 ? (chosen.seconds - row.modelledSeconds) / row.modelledSeconds : nil
            row.estimates = Dictionary(
                decision.estimates.map { ($0.path.rawValue, $0.seconds) }, uniquingKeysWith: { a, _ in a })
            row.fullOverPartial = outcome.path == .full && decision.estimates.contains { $0.path == .partial }
            row.decidedAtSeconds = decision.decidedAfterSeconds
        }
        let ci = profile.connectionIntervalMicroseconds
        let timing = DeviceTiming.of(family)
        let setup = profile.connectionSetup.wholeMicroseconds
        // The board runs its program: a partial write restarts it in pairing mode first. FF 00
        // leaves in the event after the last answer, the board reboots (with the RebootMode step
        // of its boot decision), a new connection is set up and the map read again (6 CI).
        let readMap = 3 * 2 * ci
        let modeSwitch =
            Duration.microseconds(ci + timing.reboot.wholeMicroseconds + setup + readMap) + .milliseconds(20)
        // The read-back after the reboot: a new connection, then STATUS and REGION_INFO 2 in
        // consecutive events, each answered in the next (2 CI).
        let readBack = 2 * ci
        let verification = Duration.microseconds(setup + readBack)
        // After a full update the program is read back over partial flashing too.
        let readsBack = plan.program != nil
        switch outcome.path {
        case .partial:
            let p = outcome.partial ?? PartialFlashStats()
            row.transfers = p.blocks
            row.transferUnit = "blocks"
            // A CODAL board (V2) erases a page only when it is not blank: count the erases it made.
            let erased = min(p.pages, (try? sim.board(id).flash.eraseLog.count) ?? p.pages)
            // The block that writes the program hash last repeats bytes of the blocks it overlaps:
            // bitflash's choice, not the program's, so the bound leaves it out (and its barrier).
            let programBlocks = strategy.options.partial.sealProgramHash && p.blocks > 1 ? p.blocks - 1 : p.blocks
            var bound =
                LowerBound.partial(blocks: programBlocks, pagesOpened: erased, family: family, profile: profile)
                + modeSwitch
            if p.verified { bound += verification }
            row.boundSeconds = bound.seconds
            row.boundNote =
                "partial: \(p.blocks) blocks, \(p.pages) pages opened (\(erased) erased), + switch to pairing mode"
                + (p.verified ? ", + verification" : "")
        case .upToDate:
            row.transferUnit = "blocks"
            row.boundSeconds = Duration.microseconds(setup + readMap).seconds
            row.boundNote = "up to date: setup, 3 round trips; the board keeps running"
        case .full where outcome.nordic != nil:
            let n = outcome.nordic ?? NordicDFUResult(dfuProtocol: .secure, applicationBytes: 0)
            let secure = n.dfuProtocol == .secure
            row.transfers = secure ? (n.applicationBytes + 4095) / 4096 : (n.applicationBytes + 19) / 20
            row.transferUnit = secure ? "objects" : "packets"
            var bound = LowerBound.nordicDFU(
                imageBytes: n.applicationBytes, initBytes: secure ? 56 : 14,
                protocol: secure ? .secure(objectSize: 4096) : .legacy,
                attMTU: secure ? min(profile.attMTU, 247) : 23, dataLength: secure ? min(profile.dataLength, 251) : 27,
                pageSize: Int(family.pageSize), resetDelay: .milliseconds(100), profile: profile, timing: timing)
            if readsBack { bound += .microseconds((secure ? setup : 0) + readBack) }
            row.boundSeconds = bound.seconds
            row.boundNote =
                "Nordic \(secure ? "Secure" : "legacy") DFU: \(n.applicationBytes) B application"
                + (readsBack ? ", + read-back" : "")
        case .full:
            let f = outcome.full ?? McuMgrResult()
            row.transfers = f.chunks
            row.transferUnit = "chunks"
            let configuration = (try? sim.board(id).smpServer?.configuration) ?? nil
            if let configuration, let image = plan.fullImage {
                var bound = fullBound(
                    configuration: configuration, frameLimit: f.frameLimit, oldBytes: running.count,
                    newBytes: image.bytes.count, profile: profile, timing: timing)
                var note = "full: \(image.bytes.count) B image, frames of \(f.frameLimit) B"
                if readsBack {
                    bound += .microseconds(readBack)
                    note += ", + read-back"
                }
                if strategy == .auto {
                    bound += .microseconds(readMap)
                    note += ", + the memory-map read"
                }
                row.boundSeconds = bound.seconds
                row.boundNote = note
            }
        }
        row.ratio = row.boundSeconds > 0 ? row.modelledSeconds / row.boundSeconds : 0
        return row
    }

    /// The full-DFU bound of an upload in frames of `frameLimit` bytes.
    static func fullBound(
        configuration: SMPServerConfiguration, frameLimit: Int, oldBytes: Int, newBytes: Int,
        profile: LinkProfile, timing: DeviceTiming
    ) -> Duration {
        var c = configuration
        if frameLimit > 0 { c.bufferSize = frameLimit }
        let data =
            (try? UploadChunking.maximumDataLength(
                fitting: .reassemblyBuffer(c.bufferSize),
                template: ImageUploadRequest(offset: 100_000, data: []))) ?? 0
        let page = Int(c.pageSize)
        let pages = (max(oldBytes, newBytes) + page - 1) / max(page, 1)
        return c.lowerBound(
            imageBytes: newBytes, frameOverhead: c.bufferSize - data, swapPages: pages,
            profile: profile, timing: timing)
    }

    /// CPU time of the calling thread.
    static func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
