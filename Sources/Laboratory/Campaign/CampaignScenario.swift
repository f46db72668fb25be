import FirmwareImage
import Flashing
import LinkModel
import SampleFirmware
import SimulatedBoard

/// The path a campaign run asks for: `--mode partial`, `--mode full` or `--mode auto`.
public enum CampaignPath: String, Sendable, Equatable, Codable, CaseIterable {
    case partial, full, auto
    /// `--mode auto` on stock boards, whose full-update path is their Nordic bootloader;
    /// some start stuck in it ("DfuTarg").
    case nordic

    /// The flash mode a run on this path uses.
    public var mode: FlashMode {
        switch self {
        case .partial: return .partial
        case .full: return .full
        case .auto, .nordic: return .auto
        }
    }
}

/// The kind of simulated board a run flashes.
public enum CampaignBoardKind: String, Sendable, Equatable, Codable {
    /// Partial flashing only (stock firmware), Bluetooth kept on by the program.
    case stock
    /// Partial flashing and the McuMgr SMP server of an MCUboot bootloader.
    case mcuboot
    /// Stock firmware with its Nordic bootloader: partial flashing, and Nordic DFU for a full update.
    case nordic
}

/// One sample firmware: a runtime and a program of `SampleFirmware`.
public struct CampaignImage: Sendable, Hashable, CustomStringConvertible {
    public var runtime: SampleFirmware.RuntimeID
    public var program: SampleFirmware.ProgramID

    public init(_ runtime: SampleFirmware.RuntimeID, _ program: SampleFirmware.ProgramID) {
        self.runtime = runtime
        self.program = program
    }

    public var description: String { "\(runtime.rawValue)/\(program.rawValue)" }
}

/// Everything that makes one campaign run, drawn from the campaign seed and the run's index:
/// the board, what it holds, what is flashed, the path, and the faults.
public struct CampaignScenario: Sendable, Equatable {
    public var index: Int
    public var board: Board
    public var kind: CampaignBoardKind
    /// The board starts in pairing mode (else in application mode with Bluetooth on).
    public var startsInPairingMode: Bool
    public var start: CampaignImage
    public var target: CampaignImage
    public var path: CampaignPath
    public var link: LinkProfile
    public var faults: FaultPlan
    /// SMP server faults: a request answered "busy", an upload chunk that fails to write.
    public var busyAnswers: Double
    public var flashWriteFailures: Double
    /// bitflash is stopped (killed) this long after the start of the run, sometimes right after
    /// the board reset; the next run flashes the board as it was left, continuing an unfinished
    /// partial flash from the last checkpoint. Nil: not stopped.
    public var killAt: Duration?
    /// The board starts in its Nordic bootloader, left there by an interrupted update.
    public var startsInBootloader = false

    /// The scenario's key without its faults: runs with equal keys have equal fault-free runs.
    var shapeKey: String {
        "\(board.rawValue) \(kind.rawValue) \(startsInPairingMode) \(startsInBootloader) \(start) \(target) \(path.rawValue) \(link.name)"
    }

    /// One line for violation reports: enough to run the scenario again.
    public var summary: String {
        "run \(index): \(board.rawValue) \(kind.rawValue)\(startsInPairingMode ? " (pairing mode)" : "")\(startsInBootloader ? " (in DfuTarg)" : ""), "
            + "\(start) → \(target), path \(path.rawValue), link \(link.name), fault seed \(faults.seed)"
            + (killAt.map { ", killed at \($0.secondsText)" } ?? "")
    }
}

/// What a fault-free run of a scenario's shape took: the basis of fault times and write indices.
struct CampaignShape: Sendable {
    var writes: Int
    var modelledTime: Duration
}

extension CampaignScenario {
    /// Draws run `index` of a campaign seeded with `seed`, on one of `paths` (taken in turn)
    /// and `boards`; `link` fixes the link profile (else one of the named profiles).
    /// Faults are filled in later by `withFaults(shape:)`, once the fault-free shape is known.
    static func draw(
        seed: UInt64, index: Int, paths: [CampaignPath], boards: [Board], link: LinkProfile?,
        kinds: [CampaignBoardKind]?
    ) -> CampaignScenario {
        var rng = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        _ = rng.next()
        let path = paths[index % paths.count]
        let board = boards[Int(rng.next() % UInt64(boards.count))]
        var kind: CampaignBoardKind = path == .partial && rng.chance(0.5) ? .stock : .mcuboot
        if let kinds, !kinds.contains(kind) { kind = kinds[0] }
        if path == .full || path == .auto { kind = .mcuboot }
        if path == .nordic { kind = .nordic }
        let programs: [SampleFirmware.ProgramID] = [.heart, .counter, .heart, .counter, .large]
        func program() -> SampleFirmware.ProgramID { programs[Int(rng.next() % UInt64(programs.count))] }
        func runtime() -> SampleFirmware.RuntimeID { rng.chance(0.5) ? .r1 : .r2 }
        let start = CampaignImage(runtime(), program())
        var target: CampaignImage
        switch path {
        case .partial:
            // Mostly an edit of the program; sometimes the same program again (up to date).
            target = CampaignImage(start.runtime, program())
            if target == start, rng.chance(0.7) { target.program = start.program == .heart ? .counter : .heart }
        case .full, .auto, .nordic:
            target = CampaignImage(runtime(), program())
        }
        let profile = link ?? LinkProfile.named[Int(rng.next() % UInt64(LinkProfile.named.count))]
        var drawn = CampaignScenario(
            index: index, board: board, kind: kind, startsInPairingMode: rng.chance(0.3),
            start: start, target: target, path: path, link: profile,
            faults: FaultPlan(seed: rng.next()), busyAnswers: 0, flashWriteFailures: 0, killAt: nil)
        if path == .nordic { drawn.startsInBootloader = rng.chance(0.2) }
        return drawn
    }

    /// The scenario with faults drawn from its fault seed, placed with the fault-free `shape`:
    /// disconnects at writes anywhere (the last ones are END_OF_TRANSMISSION, the reset and
    /// the requests around the swap) and at times anywhere in the run, device resets,
    /// pairing-mode timeouts, lost writes, lost and late notifications, slow erases, flash
    /// operations that never complete (the board's flash work hangs), refused connections, and
    /// SMP busy answers and flash-write failures. One run in ten has none.
    /// Only what a BLE link can do: notifications arrive in order and at most once
    /// (`FaultPlan.duplicateNotification`, `.reorderNotification`); duplicates and reordering
    /// are hostile faults (`withHostileLink(_:)`).
    func withFaults(shape: CampaignShape) -> CampaignScenario {
        var s = self
        var rng = SplitMix64(seed: faults.seed ^ 0xC0FF_EE00_D15E_A5E5)
        var plan = FaultPlan(seed: faults.seed)
        guard rng.chance(0.9) else { s.faults = plan; return s }
        func pick(_ values: [Double]) -> Double { values[Int(rng.next() % UInt64(values.count))] }
        let writes = max(shape.writes, 1)
        let time = max(shape.modelledTime.wholeMicroseconds, 1_000_000)
        func someTime() -> Duration { .microseconds(Int64(rng.next() % UInt64(time))) }
        plan.dropWrite = pick([0, 0, 0.002, 0.01])
        plan.dropNotification = pick([0, 0, 0.01, 0.03])
        plan.delayNotification = pick([0, 0.01, 0.05])
        plan.disconnectPerWrite = pick([0, 0, 0, 0.002])
        plan.refuseConnection = pick([0, 0, 0.1, 0.3])
        plan.slowErase = pick([0, 0, 0.05, 0.2])
        if rng.chance(0.4) { plan.disconnectAtWrite.insert(Int(rng.next() % UInt64(writes))) }
        if rng.chance(0.3) { plan.disconnectAtWrite.insert(max(0, writes - 1 - Int(rng.next() % 4))) }
        if rng.chance(0.3) { plan.disconnectAt.append(someTime()) }
        if rng.chance(0.15) { plan.resetDeviceAt.append(someTime()) }
        if rng.chance(0.1) { plan.pairingModeTimeout = .seconds(rng.chance(0.5) ? 15 : 270) }
        // Drawn last, so that the draws above stay as they were for every seed.
        if rng.chance(0.1) { plan.flashOperationError = 0.002 }
        s.faults = plan
        if kind == .mcuboot {
            s.busyAnswers = pick([0, 0, 0.01, 0.05])
            s.flashWriteFailures = pick([0, 0, 0, 0.01])
        }
        s.drawKill(time: time)
        return s
    }

    /// The scenario with the link fault of a hostile campaign added (nothing for a board's lies,
    /// which `FaultCampaign` gives the board): some notifications duplicated or reordered, at a
    /// rate drawn from the run's fault seed (its own generator, so the other faults stay as they were).
    func withHostileLink(_ kind: HostileKind?) -> CampaignScenario {
        guard let kind, kind.isLinkFault else { return self }
        var s = self
        var rng = SplitMix64(seed: faults.seed ^ 0xD0B1_ED0F_F1A5_C0DE)
        let rate = [0.01, 0.03, 0.1][Int(rng.next() % 3)]
        switch kind {
        case .duplicatedNotifications: s.faults.duplicateNotification = rate
        case .reorderedNotifications: s.faults.reorderNotification = rate
        default: break
        }
        return s
    }

    /// One run in four that may write partially is killed somewhere in its fault-free duration,
    /// half of those just after a board reset (drawn from its own generator, so the other faults
    /// of a seed stay as they were).
    mutating func drawKill(time: Int64) {
        guard path != .full else { return }
        var rng = SplitMix64(seed: faults.seed ^ 0x5EED_0F_C1A5_5E5)
        guard rng.chance(0.25) else { return }
        let at = Duration.microseconds(Int64(rng.next() % UInt64(max(time, 1))) + 1)
        killAt = at
        if rng.chance(0.5) {
            let before = Duration.microseconds(Int64(rng.next() % 200_000))
            faults.resetDeviceAt.append(max(.zero, at - before))
        }
    }
}
