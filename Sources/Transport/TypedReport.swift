/// Typed reports: what a flow tells the user as a value, worded elsewhere.
///
/// A flow that has moved to typed reports declares `Report` (one enum per flow family, its
/// associated values the facts: block, offset, attempt, the reason as a code) and emits
/// `Self.report(value)`; nothing in the flow builds a sentence. The value travels unchanged
/// through `ChildFlow` and the drivers to their report observers, wrapped in `AnyFlowReport` so
/// that drivers, composed flows and observers need no type parameter per flow. The words are made
/// in one presenter (`FlowWords` in the Flashing module), which the command line, the JSON
/// output, the simulator's trace and library users share; a library user can instead switch on
/// the value (`report.value(as: McuMgrReport.self)`).
///
/// A flow's choice of path is a typed report too (kind `decision`): its `decisionCode` is the
/// stable code scripts read, its words are the presenter's.
public protocol FlowReportValue: Sendable, Equatable {
    /// How the value is shown: as a retry, a `-v` trace line, a note or a decision.
    var kind: FlowReportKind { get }
    /// For a decision, its stable code (`FlashReason.code`: `runtime-matches`, `up-to-date`, …);
    /// nil for every other kind.
    var decisionCode: String? { get }
}

extension FlowReportValue {
    public var decisionCode: String? { nil }
}

/// How a typed report is shown, as the string reports of the same name are.
public enum FlowReportKind: String, Sendable, Equatable, Codable, CaseIterable {
    /// Something went wrong and is being tried again (counted by the class grid).
    case retry
    /// A protocol-level line for `-v`.
    case trace
    /// A plain note for the user.
    case note
    /// The path was chosen (`FlowReport.decision`): reported before anything is written.
    case decision
}

/// A flow with no typed reports of its own (it reports in words, or only phases and progress).
extension Never: FlowReportValue {
    public var kind: FlowReportKind { switch self {} }
}

/// A typed report of any flow, as it travels through drivers and composed flows.
public struct AnyFlowReport: Sendable, Equatable, CustomStringConvertible {
    /// The flow's value (`SecureDFUReport`, `McuMgrReport`, …).
    public let value: any FlowReportValue

    public init(_ value: some FlowReportValue) { self.value = value }

    public var kind: FlowReportKind { value.kind }

    /// The decision's stable code, for a report of kind `decision`.
    public var decisionCode: String? { value.decisionCode }

    /// The value as the flow's own report type, or nil when it is another flow's.
    public func value<R: FlowReportValue>(as type: R.Type) -> R? { value as? R }

    public static func == (lhs: AnyFlowReport, rhs: AnyFlowReport) -> Bool { lhs.value.isEqual(to: rhs.value) }

    /// The value as Swift prints it (its case and associated values), not its words: for
    /// debugging. The words come from `FlowWords`.
    public var description: String { String(describing: value) }
}

extension FlowReportValue {
    fileprivate func isEqual(to other: any FlowReportValue) -> Bool { (other as? Self) == self }
}

extension FlowMachine {
    /// The action that reports `value`, a report of this flow's own type.
    public static func report(_ value: Report) -> FlowAction { .report(.flow(AnyFlowReport(value))) }
}
