import NordicDFUFrames
import Transport

/// The counts a Nordic DFU flow keeps over the whole update, whichever state it is in: they
/// span connections and objects, so they cannot live in one state's data.
struct DFUBudget: Equatable, Sendable {
    /// Entries into the bootloader from the application (a reset before the transfer took
    /// brings the old application back, and the entry is made again).
    var entries = 0
    /// Requests that went unanswered.
    var timeouts = 0
    /// Links lost during the transfer (legacy DFU: also the restarts of the transfer).
    var losses = 0
    /// Legacy DFU: connections to the bootloader in a row that dropped before its first answer.
    var silentDrops = 0
    /// Secure DFU: init packets whose checksum did not match.
    var commandMismatches = 0
    /// Secure DFU: data objects sent again since the last one was executed.
    var objectAttempts = 0
}

/// What the Secure and legacy DFU flows share: one retry budget over the whole update
/// (`NordicDFUOptions.retryLimit`), checked after every event, and the runs both take on
/// the way into the bootloader (docs/protocols/nordic-dfu.md §2.5, §3.5).
protocol RetryBudgetedFlow: FlowMachine where Output == NordicDFUResult, Report == NordicDFUReport {
    var options: NordicDFUOptions { get }
    var result: NordicDFUResult { get set }
    var budget: DFUBudget { get set }
    /// The step the flow is in (its name goes into errors).
    var step: NordicDFUStep { get }
    /// The flow's reaction to one event.
    mutating func advance(_ event: FlowEvent) -> [FlowAction]
    mutating func fail(_ error: NordicDFUError) -> [FlowAction]
}

extension RetryBudgetedFlow {
    /// `advance(event)`, unless the retries it counted passed the budget: then the flow fails
    /// instead of sending the writes of that step (what it reported stays).
    mutating func advanceWithinBudget(_ event: FlowEvent) -> [FlowAction] {
        guard outcome == nil else { return [] }
        let actions = advance(event)
        guard outcome == nil, result.retries > options.retryLimit else { return actions }
        return actions.filter { if case .write = $0 { return false } else { return true } }
            + fail(.tooManyRetries(step: step.name, retries: result.retries))
    }

    /// Connected to the board's application: the entry into the bootloader (reported, then
    /// `writes`), at most three times in a run; then the flow fails.
    mutating func enterBootloader(writes: [FlowAction]) -> [FlowAction] {
        guard budget.entries < 3 else { return fail(.bootloaderNotFound(attempts: budget.entries)) }
        if budget.entries > 0 { result.retries += 1 }
        budget.entries += 1
        return [.report(.phase(.reset)), Self.report(.enteringBootloader(result.dfuProtocol))] + writes
    }

    /// Connected to the bootloader (`first`: the run started there): counts the connection and
    /// reports the upload phase.
    mutating func bootloaderReached(first: Bool) -> [FlowAction] {
        if first { result.recoveredFromBootloader = true }
        result.bootloaderConnections += 1
        var actions: [FlowAction] = [.report(.phase(.upload))]
        if first {
            actions.append(Self.report(.recoveringFromBootloader))
        }
        return actions
    }

    /// A connection to the bootloader failed, the `failures`th in a row: tries again, or fails
    /// when `NordicDFUOptions.reconnectAttempts` are spent.
    mutating func connectAgain(after error: TransportError, failures: Int) -> [FlowAction] {
        guard failures < options.reconnectAttempts else { return fail(.bootloaderNotFound(attempts: failures)) }
        return [Self.report(.reconnecting(error)), .connect(after: options.reconnectDelay, to: .bootloader)]
    }

    /// The link dropped `during` a step of the transfer: counts the loss and reconnects to the
    /// bootloader (after `cancelling` the step's timers), to go on or, `restartsTransfer`, to
    /// start the transfer again; or fails when `NordicDFUOptions.linkLossLimit` is passed.
    mutating func linkLost(
        _ reason: DisconnectReason, during: NordicDFUStep, cancelling: [FlowAction], restartsTransfer: Bool
    ) -> [FlowAction] {
        budget.losses += 1
        result.retries += 1
        guard budget.losses <= options.linkLossLimit else {
            return fail(.linkLost(step: during.name, attempts: budget.losses))
        }
        return cancelling + [
            Self.report(.linkLost(during: during, reason: reason, restartsTransfer: restartsTransfer)),
            .connect(after: options.reconnectDelay, to: .bootloader)
        ]
    }
}
