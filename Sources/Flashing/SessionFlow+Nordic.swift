import FirmwareImage
import NordicDFU
import NordicDFUFrames
import Transport
import SMP

/// The Nordic DFU steps of a session: choosing the full-update path, recovering a board found
/// in its bootloader ("DfuTarg"), and running `NordicDFUFlow` as a child.
extension SessionFlow {
    var hasNordicDFU: Bool {
        guard let s = connection?.services else { return false }
        return s.contains(NordicGATT.secureService) || s.contains(NordicGATT.legacyService)
            || s.contains(NordicGATT.dfuControlService)
    }

    /// The Nordic DFU estimate of this board, when it offers Nordic DFU and the file has an
    /// application for it: Secure or legacy DFU as the services show (the family's when they
    /// do not tell).
    func nordicEstimator() -> NordicDFUEstimator? {
        guard hasNordicDFU, let app = try? DFUApplication.cut(from: plan.image, family: plan.family) else { return nil }
        return NordicDFUEstimator(
            applicationBytes: app.bytes.count, protocol: nordicIsSecure ? .secure : .legacy,
            options: options.nordic)
    }

    /// Whether the board's bootloader speaks Secure DFU (else legacy DFU).
    var nordicIsSecure: Bool { connection.flatMap(NordicDFUTarget.init)?.isSecure ?? (plan.family == .nrf52833) }

    /// The path the estimates chose when it is a full one; otherwise McuMgr when the board offers
    /// SMP, Nordic DFU when it offers that; `--full-path` forces one.
    /// Without either the McuMgr step reports that the board has no full-update path.
    func chooseFullPath(_ reason: FlashReason) -> Result<FullUpdatePath, FlashError> {
        let hasSMP = connection?.services.contains(SMPGATT.service) ?? false
        switch options.fullPath {
        case .nordic?:
            return hasNordicDFU
                ? .success(.nordic)
                : .failure(.fullPathUnavailable(.nordic, reason: reason, names: options.optionNames))
        case .mcumgr?:
            return hasSMP
                ? .success(.mcumgr)
                : .failure(.fullPathUnavailable(.mcumgr, reason: reason, names: options.optionNames))
        case nil:
            if decision?.chosen == .nordicDFU, hasNordicDFU { return .success(.nordic) }
            if decision?.chosen == .mcumgr, hasSMP { return .success(.mcumgr) }
            // An McuMgr image that cannot be installed leaves Nordic DFU, when the board has it;
            // without it the McuMgr step refuses the image with the reason.
            let smpUsable = hasSMP && mcuMgrImageProblem == nil
            return !smpUsable && hasNordicDFU ? .success(.nordic) : .success(.mcumgr)
        }
    }

    /// A board that is already in its Nordic bootloader gets the file by Nordic DFU.
    mutating func recoverFromBootloader(_ info: ConnectionInfo, now: Duration) -> [FlowAction]? {
        guard let target = NordicDFUTarget(info), target.isBootloader else { return nil }
        let reason = FlashReason(
            code: "in-bootloader",
            message: "the board is in its Nordic bootloader (\"DfuTarg\"), left there by an interrupted "
                + "update; a full update by Nordic \(target.isSecure ? "Secure" : "legacy") DFU recovers it")
        if options.mode == .partial {
            return fail(
                FlashError.partialImpossible(
                    "the board is in its Nordic bootloader (\"DfuTarg\"), where only a full "
                        + "update can recover it; remove \(options.optionNames.mode(.partial))"))
        }
        if options.fullPath == .mcumgr {
            return fail(FlashError.fullPathUnavailable(.mcumgr, reason: reason, names: options.optionNames))
        }
        if options.dryRun { return [reason.decision] + finishDryRun(path: .full, reason: reason) }
        return [reason.decision] + startNordic(info, reason: reason, fallback: false, now: now)
    }

    mutating func goNordic(_ reason: FlashReason, fallback: Bool, now: Duration) -> [FlowAction] {
        let secure = nordicIsSecure
        let why =
            options.fullPath == .nordic
            ? "as \(options.optionNames.fullPath(.nordic)) asks"
            : "the board has no McuMgr service, and its bootloader speaks \(secure ? "Secure" : "legacy") DFU"
        let explained = FlashReason(
            code: reason.code,
            message: "\(reason.message); full update by Nordic \(secure ? "Secure" : "legacy") DFU (\(why))",
            details: reason.details)
        let asked = options.fullPath == .nordic ? options.optionNames.fullPath(.nordic) : nil
        let note = Self.report(.fullUpdateByNordicDFU(secure: secure, askedBy: asked))
        guard linkUp, let info = connection else {
            enter(.nordicReconnecting(reason: explained, fallback: fallback, attempts: 1))
            return [note, .connect(after: options.nordic.reconnectDelay)]
        }
        return [note] + startNordic(info, reason: explained, fallback: fallback, now: now)
    }

    mutating func nordicReconnecting(
        _ event: FlowEvent, reason: FlashReason, fallback: Bool, attempts: Int,
        now: Duration
    ) -> [FlowAction] {
        switch event {
        case let .connected(info):
            return startNordic(info, reason: reason, fallback: fallback, now: now)
        case let .connectFailed(error):
            guard attempts < options.nordic.reconnectAttempts else {
                return fail(FlashError.fullUpdateUnreachable(error))
            }
            enter(.nordicReconnecting(reason: reason, fallback: fallback, attempts: attempts + 1))
            return [.connect(after: options.nordic.reconnectDelay)]
        default:
            return []
        }
    }

    mutating func startNordic(_ info: ConnectionInfo, reason: FlashReason, fallback: Bool, now: Duration)
        -> [FlowAction]
    {
        var child = ChildFlow(
            NordicDFUFlow(image: plan.image, family: plan.family, options: options.nordic), scope: "nordic.")
        let (actions, result) = child.handle(.start(info), now: now)
        enter(.nordic(child, reason: reason, fallback: fallback))
        return Self.withoutDonePhase(actions)
            + (result.map { nordicFinished($0, reason: reason, fallback: fallback, now: now) } ?? [])
    }

    mutating func nordicFinished(
        _ result: Result<NordicDFUResult, any Error>, reason: FlashReason, fallback: Bool,
        now: Duration
    ) -> [FlowAction] {
        switch result {
        case let .success(stats):
            return fullUpdateDone(
                SessionOutcome(
                    path: .full, reason: reason, fallback: fallback, partial: partialStats,
                    full: nil, nordic: stats), now: now)
        case let .failure(error):
            return fail(FlashError.nordicDFUFailed(reason: reason, error: error))
        }
    }
}
