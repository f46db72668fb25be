import NordicDFUFrames
import Transport

/// What the Secure and legacy DFU flows share: one retry budget over the whole update
/// (`NordicDFUOptions.retryLimit`), checked after every event.
protocol RetryBudgetedFlow: FlowMachine where Output == NordicDFUResult {
    var options: NordicDFUOptions { get }
    var result: NordicDFUResult { get }
    /// The step in words, for the error.
    var stepName: String { get }
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
            + fail(.tooManyRetries(step: stepName, retries: result.retries))
    }
}
