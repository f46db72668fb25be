import FirmwareImage
import LinkModel
import NordicDFU
import NordicDFUFrames
import PartialFlashing
import PartialFlashingFrames

/// Estimates a class set: several boards flashed at once through one or more adapters, each
/// adapter with one radio that its connections share.
///
/// A board alone on an adapter takes its path estimate (`PathEstimate`), part by part, each
/// part with its time alone `d` (the board's own chain of connection events and device work:
/// `PartialEstimator`, `McuMgrEstimator`, `NordicDFUEstimator`) and the air time `a` of its
/// connection events (`RadioDemand`, from `AirTime`: packets, inter-frame spaces, the board's
/// answers). The adapter's radio carries one connection event at a time (events of different
/// connections never overlap), so a part asks for `a / d` of it. `ClassSchedule` moves every
/// board through its parts at once: while the parts the boards are in at a moment ask for no
/// more than the whole radio, each keeps its pace alone (an event pushed back by another
/// connection's still leaves within the board's own interval); when they ask for more, the
/// radio is busy all the time and each board that sends goes at 1 / their sum of its pace,
/// while parts without air time (connection setup, reboots, page erases, MCUboot's swap) keep
/// their time. `n` boards alike in one part thus take `max(d, n · a)`, and boards that fall out
/// of step (connected one after another, a Secure DFU object's packets between erases) find
/// room in each other's quiet parts.
///
/// Each adapter's controller makes one connection at a time (`ClassSchedule`, `Advertising`):
/// a board stops where it asks for a connection (its first, a restart in pairing mode, its
/// bootloader, the read-back of its new program) until the controller, which hears the boards
/// that advertise most often first, has made it. Boards that start apart (a place freed in a
/// wave, a board left after the others ended) meet the boards beside them at the moment. Each
/// board has its own demand: its kind's plan and its own path. Time alone that sends nothing
/// (a connection's setup after its creation, a reboot, Secure DFU's page erases after each
/// Create) is not slowed by a full radio.
///
/// Stock boards in Secure DFU's object loop fall into step: each object's packets wait for the
/// packets of the boards beside it, so their erases coincide and leave the radio quiet. Each
/// board's Creates and erases alternate with its packets object by object
/// (`RadioDemand.alternate`), and all through the loop it asks for its packets' share.
///
/// Left out, as too small to count:
/// - A Secure DFU bootloader resets once it has written its settings after its answer to the
///   last Execute (`SecureDFUBootloader.resetAfterSettingsWrite`); on a radio busy with other
///   boards' full events that
///   answer can be lost, and the flow connects again to the new application instead of seeing
///   the link drop: one reconnection delay and setup in place of the drop, under 1 % of a class.
///
/// Left out: a pushed-back event whose answer misses the board's next anchor loses a whole
/// interval; the shares are taken as a fluid, and every part that sends is slowed alike. The
/// figures against the simulated adapters are in docs/auto.md ("A class set").
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

    /// Estimates a class: each board's start, time and finish, with `adapters` (one unlimited
    /// adapter when empty) and their connection limits. Each board has its own demand (a mixed
    /// class: boards on different paths, or of different kinds), and shares the radio part by
    /// part with the boards beside it at the moment (`ClassSchedule`).
    public static func estimate(_ boards: [RadioDemand], adapters: [Adapter]) -> ClassEstimate {
        let schedule = ClassSchedule.schedule(boards.map(\.flow), adapters: adapters)
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
        // The board's first connection: in application mode when it runs its program.
        let first: Advertising = runsProgram ? .application : .pairing
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
            return PartialEstimator(
                plan: blocks, verifies: options.partial.verifyAfterFlash, switchesToPairingMode: runsProgram
            ).radioDemand(context)
        case .mcumgr:
            guard let image = plan.fullImage else { return nil }
            var m = McuMgrEstimator(imageBytes: image.bytes.count, options: options.mcumgr)
            m.readsBack = readsBack
            return m.radioDemand(context, first: first)
        case .nordicDFU:
            guard let app = try? DFUApplication.cut(from: plan.image, family: plan.family) else { return nil }
            var n = NordicDFUEstimator(
                applicationBytes: app.bytes.count, protocol: plan.family == .nrf52833 ? .secure : .legacy,
                options: options.nordic)
            n.readsBack = readsBack
            return n.radioDemand(context, first: first)
        }
    }
}
