/// Checkpoints: where an interrupted flow could continue, as a value of the flow's own type.
///
/// A flow that can continue an interrupted write across runs reports where it stands as
/// `FlowReport.checkpoint` whenever that changes, and `nil` when nothing is left to continue
/// (a driver then forgets any point it saved). The value is the flow's own type (the partial
/// flash's `ResumePoint`, in PartialFlashingFrames), wrapped in `AnyFlowCheckpoint` so that the
/// base layer, composed flows and drivers name no flow's type. A driver that keeps checkpoints
/// (bitflash: a small JSON file per board in its state folder) takes the value back with
/// `value(as:)` and gives it to the next run for the same board.
public protocol FlowCheckpoint: Sendable, Equatable, Codable {}

/// A checkpoint of any flow, as it travels through drivers and composed flows.
public struct AnyFlowCheckpoint: Sendable, Equatable, CustomStringConvertible {
    /// The flow's value (`ResumePoint`, …).
    public let value: any FlowCheckpoint

    public init(_ value: some FlowCheckpoint) { self.value = value }

    /// The value as the flow's own checkpoint type, or nil when it is another flow's.
    public func value<C: FlowCheckpoint>(as type: C.Type) -> C? { value as? C }

    public static func == (lhs: AnyFlowCheckpoint, rhs: AnyFlowCheckpoint) -> Bool {
        lhs.value.isEqual(to: rhs.value)
    }

    /// The value as Swift prints it, for debugging.
    public var description: String { String(describing: value) }
}

extension FlowCheckpoint {
    fileprivate func isEqual(to other: any FlowCheckpoint) -> Bool { (other as? Self) == self }
}

extension FlowReport {
    /// A flow's checkpoint as a report: `.report(.checkpoint(point))` with the flow's own value,
    /// or `.checkpoint(nil)` (the case itself) for "nothing left to continue".
    public static func checkpoint(_ point: (some FlowCheckpoint)?) -> FlowReport {
        .checkpoint(point.map { AnyFlowCheckpoint($0) })
    }
}
