import FirmwareImage
import LinkModel
import NordicDFU
import NordicDFUFrames
import PartialFlashing
import PartialFlashingFrames

/// Estimates a class set: several boards flashed at once through one or more adapters, each
/// adapter with one radio that its connections share.
///
/// A board alone on an adapter takes its path estimate (`PathEstimate`), part by part. With
/// `n` boards on one adapter in the same part at once, the part takes the longer of
/// - its time alone `d`: the board's own chain of connection events and device work
///   (`PartialEstimator`, `McuMgrEstimator`, `NordicDFUEstimator`), and
/// - `n · a`: the air time `a` of one board's connection events in the part (`RadioDemand`,
///   from `AirTime`: packets, inter-frame spaces, the board's answers) times the boards. The
///   adapter's radio carries one connection event at a time (`AirTime`: events of different
///   connections never overlap), so the part cannot end before every board's events were on air.
/// Parts without air time (connection setup, reboots, page erases, the wait after a Nordic
/// Create, MCUboot's swap) share nothing and keep their time alone. Nothing is added for an
/// event that waits for the radio beyond that: when the radio has room (`n · a < d`) an event
/// pushed back by another connection's still leaves within the board's own interval, and when
/// it has none the radio is busy all the time and `n · a` already counts every wait.
///
/// Boards connected one after another (`Advertising`) start one creation apart, `(n − 1) · s`
/// from first to last. A part whose air comes in bursts shorter than that spread (a Secure DFU
/// object's packets) falls out of step with the other boards': it keeps its time alone while its
/// own share of the radio (`a / d`) and the others' mean share (`(n − 1) · A / T`, with `A` and
/// `T` one board's whole air time and time alone) fit in the radio together, its events finding
/// room between theirs. A part in one long burst (an McuMgr upload, partial flashing's blocks)
/// overlaps the others' and shares: `max(d, n · a)`, as does a part whose shares do not fit.
///
/// Boards asked to connect at once get their connections one after another (`Advertising`,
/// `RadioDemand.creationWait`): a board takes the longer of that wait plus its time alone and
/// its time sharing the radio with the boards that started with it. Boards that start apart (a
/// place freed in a wave, a board left after the others ended) move at the pace of the boards
/// beside them at the moment (`ClassSchedule`). On the simulated adapters (which connect the
/// same way) this holds classes of 1 to 64 boards within 10 % on every path and profile, on
/// adapters with no connection limit and with 5, 8 and 64, but for three: Secure DFU classes
/// of 6 boards at once at 30 ms, and 64 boards through 8 connections at 7.5 ms (partial) and
/// 15 ms (McuMgr) (docs/auto.md, the figures after "A class set").
///
/// Left out, as too small to count:
/// - A Secure DFU bootloader resets 100 ms after its answer to the last Execute
///   (`SecureDFUBootloader.resetDelay`); on a radio busy with other boards' full events that
///   answer can be lost, and the flow connects again to the new application instead of seeing
///   the link drop: one reconnection delay and setup in place of the drop, under 1 % of a class.
///
/// Left out: how boards that contend fall back into step. Past the point where the shares
/// no longer fit, every board of the part is taken to contend with all the others.
///
/// Each board has its own demand (its kind's plan and its own path), but the boards on one
/// path are taken to move through the parts together. Several adapters and connection limits
/// are handled by `ClassSchedule`.
public enum ClassEstimator {
    /// An adapter a class is flashed through.
    public struct Adapter: Sendable, Equatable, Codable {
        /// Its name, e.g. `hci0`.
        public var name: String
        /// How many boards it keeps connected at once (nil: no limit).
        public var connectionLimit: Int?

        public init(name: String, connectionLimit: Int? = nil) {
            self.name = name
            self.connectionLimit = connectionLimit.map { max($0, 1) }
        }

        /// One adapter with no connection limit.
        public static let unlimited = Adapter(name: "adapter")
    }

    /// A board's time when `boards` boards like it share one adapter's radio, beside boards on
    /// other paths that take `background` of the radio on average (their air time over their
    /// time alone, summed): what they leave is what this board and those like it share.
    public static func boardTime(_ demand: RadioDemand, sharedBy boards: Int, background: Double = 0) -> Duration {
        // Past saturation the others leave a sliver; the part is then as slow as it can be modelled.
        let room = max(1 - background, 0.05)
        let n = Int64(max(boards, 1))
        // The share of the radio the other boards take on average, out of step with this one.
        let whole = max(demand.alone.wholeMicroseconds, 1)
        let others = Double(n - 1) * Double(demand.air.wholeMicroseconds) / Double(whole)
        // How far apart the boards start: one connection creation each (`Advertising`).
        let spacing = demand.firstConnecting.map { ($0.interval + demand.connectionInterval).wholeMicroseconds } ?? 0
        let spread = (n - 1) * spacing
        var total: Int64 = 0
        for part in demand.parts {
            let alone = part.duration.wholeMicroseconds
            let air = part.air.wholeMicroseconds
            guard air > 0, n > 1 || background > 0 else {
                total += alone
                continue
            }
            // Bursts shorter than the boards' spread fall out of step; they keep their time
            // alone while their share and the others' fit in the radio.
            let burst = alone / Int64(part.bursts)
            let outOfStep = burst < spread
            if outOfStep, Double(air) / Double(max(alone, 1)) + others + background <= 1 {
                total += alone
            } else {
                total += max(alone, Int64((Double(n * air) / room).rounded()))
            }
        }
        return .microseconds(total)
    }

    /// Estimates a class: each board's start, time and finish, with `adapters` (one unlimited
    /// adapter when empty) and their connection limits.
    ///
    /// In a mixed class (boards on different paths) a board shares the radio in step with the
    /// boards on its own path, in proportion to the class, and the boards on other paths take
    /// their mean share of it (`boardTime(_:sharedBy:background:)`).
    public static func estimate(_ boards: [RadioDemand], adapters: [Adapter]) -> ClassEstimate {
        // Per path: how many boards, and their mean share of the radio (air time over time alone).
        var count: [EstimatedPath: Int] = [:]
        var share: [EstimatedPath: Double] = [:]
        for b in boards {
            count[b.path, default: 0] += 1
            share[b.path, default: 0] += Double(b.air.wholeMicroseconds) / Double(max(b.alone.wholeMicroseconds, 1))
        }
        let total = Double(max(boards.count, 1))
        let schedule = ClassSchedule.schedule(
            boards: boards.count, adapters: adapters,
            creationWait: { boards[$0].creationWait(position: $1, of: $2) }
        ) { board, sharing in
            let path = boards[board].path
            guard count.count > 1 else { return boardTime(boards[board], sharedBy: sharing) }
            let mine = max(1, Int((Double(sharing) * Double(count[path] ?? 0) / total).rounded()))
            // The other paths' boards among those sharing, in proportion, each at its path's mean share.
            let background = share.filter { $0.key != path }.values.reduce(0, +) * Double(sharing) / total
            return boardTime(boards[board], sharedBy: mine, background: background)
        }
        return ClassEstimate(boards: schedule, adapters: adapters.isEmpty ? [.unlimited] : adapters)
    }

    /// `count` boards alike, each demanding `demand`.
    public static func estimate(_ demand: RadioDemand, boards count: Int, adapters: [Adapter]) -> ClassEstimate {
        estimate(Array(repeating: demand, count: max(count, 0)), adapters: adapters)
    }

    /// What one board of a class is expected to ask of the radio when `plan` is flashed by
    /// `path`, from a board not yet connected (connection and memory-map read included);
    /// nil when the plan cannot take the path.
    ///
    /// Partial flashing assumes the board runs the file's runtime and declares the program
    /// region from the program's start to the scratch page, as MakeCode boards do; a board
    /// that runs its program (`runsProgram`) is restarted in pairing mode first.
    public static func demand(
        plan: FlashPlan, path: EstimatedPath, options: FlashOptions, link: LinkEstimate,
        runsProgram: Bool = true
    ) -> RadioDemand? {
        let context = EstimateContext(
            link: link, board: BoardCosts(family: plan.family), includesMemoryMapRead: true)
        let readsBack = plan.program != nil && options.partial.verifyAfterFlash
        let demand: RadioDemand?
        switch path {
        case .partial:
            guard let program = plan.program else { return nil }
            let declared = RegionInfo(
                id: 2, start: program.magicAddress, end: plan.family.layout.scratchPage, hash: program.programHash)
            guard
                let blocks = try? BlockPlan(
                    image: plan.image, program: program, boardRegion: declared, family: plan.family,
                    skipErasedBlocks: options.partial.skipErasedBlocks,
                    sealProgramHash: options.partial.sealProgramHash)
            else { return nil }
            demand = PartialEstimator(
                plan: blocks, verifies: options.partial.verifyAfterFlash, switchesToPairingMode: runsProgram
            ).radioDemand(context)
        case .mcumgr:
            guard let image = plan.fullImage else { return nil }
            var m = McuMgrEstimator(imageBytes: image.bytes.count, options: options.mcumgr)
            m.readsBack = readsBack
            demand = m.radioDemand(context)
        case .nordicDFU:
            guard let app = try? DFUApplication.cut(from: plan.image, family: plan.family) else { return nil }
            var n = NordicDFUEstimator(
                applicationBytes: app.bytes.count, protocol: plan.family == .nrf52833 ? .secure : .legacy,
                options: options.nordic)
            n.readsBack = readsBack
            demand = n.radioDemand(context)
        }
        // Boards asked to connect together get their connections spaced by one creation; a later
        // connection whose creation takes longer spaces them that much more. What counts is the
        // slowest creation of the flow: pairing mode for partial flashing (its restart in pairing
        // mode, or a board already there), else the board's first connection (the bootloader's
        // and the new program's advertise as often or more).
        let advertising: Advertising = path == .partial || !runsProgram ? .pairing : .application
        let first: Advertising = runsProgram ? .application : .pairing
        // The connections besides the first and the slowest: the read-back of the new program,
        // and a Nordic DFU's bootloader.
        var later: [Advertising] = readsBack ? [.application] : []
        if path == .nordicDFU { later.append(.bootloader) }
        return demand.map {
            RadioDemand(
                path: $0.path, parts: $0.parts, firstConnecting: first, connecting: advertising,
                laterConnecting: later, connectionInterval: link.profile.connectionInterval)
        }
    }
}
