import McuMgr
import NordicDFU
import PartialFlashing
import Transport

/// The one presenter of the flows' typed reports: each value (`NordicDFUReport`,
/// `McuMgrReport`, `PartialFlashReport`, `PartialFlashWriterReport`, `SessionReport`) in the words the command line prints,
/// the JSON output carries in `message` and the simulator's trace records. Library users show
/// reports through it too, or switch on the values themselves.
///
/// The words are pinned, case by case, by `FlowWordsTests`; flows and their tests deal in
/// values only.
public enum FlowWords {
    /// The report in words, as its kind shows it (without the `retry:` prefix of a retry line).
    /// A value of a type the presenter does not know is shown as Swift prints it.
    public static func text(of report: AnyFlowReport) -> String {
        if let r = report.value(as: NordicDFUReport.self) { return text(of: r) }
        if let r = report.value(as: McuMgrReport.self) { return text(of: r) }
        if let r = report.value(as: PartialFlashReport.self) { return text(of: r) }
        if let r = report.value(as: PartialFlashWriterReport.self) { return text(of: r) }
        if let r = report.value(as: SessionReport.self) { return text(of: r) }
        return report.description
    }
}

extension FlowReport {
    /// The report as the command line and the JSON output show it: a typed value becomes the
    /// retry, trace or note of its kind, in `FlowWords`' words; every other report is itself.
    public var worded: FlowReport {
        guard case let .flow(r) = self else { return self }
        let text = FlowWords.text(of: r)
        switch r.kind {
        case .retry: return .retry(text)
        case .trace: return .trace(text)
        case .note: return .note(text)
        case .decision: return .decision(code: r.decisionCode ?? "", message: text)
        }
    }
}
