import BlueZFlashing
import Diagnostics
import FirmwareImage
import Flashing
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Transport
import UDPTransport

/// bitflash's one flasher, behind every front door (the command line, `watch`, class sets,
/// programs): the policy, over a backend that reaches the boards.
///
/// The policy is the same whatever the backend: a file is read for each board (`FlashPolicy`:
/// chip family, address range, SoftDevice, MCUboot header, intact images, something to write)
/// and refused with a typed `FlashRefusal` before anything is sent; an interrupted partial flash
/// continues from its record (`ResumeRecords`); a class is estimated from each board's own
/// decision (`ClassForecast`) and leaves the record a retry reads (`ClassRunRecord`).
///
/// ```swift
/// let flasher = Flasher(.bluez(BlueZFlashSettings()))
/// for await update in flasher.flash(try Firmware.parse(bytes, fileName: "counter.hex"), on: ["zotig"]) { … }
/// ```
public struct Flasher: Sendable {
    /// Where the boards are.
    public enum Backend: Sendable {
        /// Real boards through BlueZ (`BlueZFlasher`).
        case bluez(BlueZFlashSettings)
        /// Simulated boards on a modelled link, on virtual time (`SimulatedFlash`); their resume
        /// records in `resume` (nil: none kept).
        case simulated(resume: (any ResumeRecordStore)?)
        /// One McuMgr server over SMP/UDP (Zephyr's port 1337 transport): full updates only.
        case udp(UDPEndpoint)
    }

    public var backend: Backend
    /// The policy's settings: the board to plan for, the MCUboot image a full update uploads,
    /// whether overridable problems are let through (`force`), how messages name the file.
    public var plan: PlanSettings
    /// How each session runs: mode, preferences, dry run, the protocols' options.
    public var options: FlashOptions
    /// Forget resume records and start partial flashes from their first block.
    public var startOver: Bool

    public init(
        _ backend: Backend, plan: PlanSettings = PlanSettings(), options: FlashOptions = FlashOptions(),
        startOver: Bool = false
    ) {
        self.backend = backend
        self.plan = plan
        self.options = options
        self.startOver = startOver
    }

    /// The plan for `firmware` on a board of `kind` by the policy (`FlashPolicy`).
    /// - Parameters:
    ///   - described: how messages name the board (`simulated micro:bit V2`, `BBC micro:bit [zotig]`).
    ///   - warn: receives one sentence per problem `plan.force` let through.
    /// - Throws: `FlashRefusal`.
    public func plan(
        _ firmware: Firmware, for kind: Board, described: String, warn: (String) -> Void = { _ in }
    ) throws -> FlashPlan {
        try FlashPolicy.plan(firmware, for: kind, described: described, settings: plan, warn: warn)
    }

    /// The real boards' flasher with this flasher's policy (nil for another backend).
    public var bluez: BlueZFlasher? {
        guard case var .bluez(settings) = backend else { return nil }
        settings.plan = plan
        settings.options = options
        settings.startOver = startOver
        return BlueZFlasher(settings: settings)
    }

    /// Flashes `firmware` onto each real board `boards` names (an address or a name), each
    /// planned for by the policy as it is detected; results and refusals arrive as updates.
    /// - Throws: `FlasherError.wrongBackend` for another backend than `.bluez`.
    public func flash(_ firmware: Firmware, on boards: [String]) throws -> FlashUpdates {
        guard let bluez else { throw FlasherError.wrongBackend }
        return bluez.flash(firmware, on: boards)
    }

    /// A full McuMgr update of `firmware` over SMP/UDP to the server of the `.udp` backend,
    /// planned for a board of `kind` (the server cannot be asked what it is).
    /// - Throws: `FlashRefusal`, or `FlasherError` (another backend, no image for a full update).
    public func flashOverUDP(
        _ firmware: Firmware, kind: Board, onEvent: (@Sendable (FlashEvent) -> Void)? = nil
    ) async throws -> FlashResult {
        guard case let .udp(endpoint) = backend else { throw FlasherError.wrongBackend }
        let planned = try self.plan(firmware, for: kind, described: "SMP server \(endpoint) (\(kind.displayName))")
        guard planned.fullImage != nil else { throw FlasherError.noFullImage(plan.fileLabel ?? firmware.fileName) }
        var options = options
        options.mode = .full
        return await UDPFlash.run(plan: planned, options: options, endpoint: endpoint, onEvent: onEvent)
    }
}

/// Why the flasher cannot do what it was asked, besides the policy's refusals.
public enum FlasherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A flash of another backend's boards (real boards asked of a simulated flasher, and so on).
    case wrongBackend
    /// A full update was asked for and no MCUboot image can be made from the file (its label).
    case noFullImage(String)

    public var description: String {
        switch self {
        case .wrongBackend: return "this flasher's backend does not reach such boards; make one with the right backend"
        case let .noFullImage(label):
            return "\(label): no MCUboot image can be made from it for a full update; give one (PlanSettings.dfuImage)"
        }
    }
}

extension FlasherError: DomainError {
    /// A request of another backend is an invalid request; a file with nothing for a full update is bad firmware.
    public var failureKind: FailureKind { self == .wrongBackend ? .invalidRequest : .badFirmware }
}
