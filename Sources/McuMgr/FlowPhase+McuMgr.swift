import Transport

/// The phases only an McuMgr upgrade has (`FlowReport.phase`), beside those every flow shares
/// (`connecting`, `upload`, `reset`, `verify`, `done`).
extension FlowPhase {
    /// Marking the uploaded image for a test boot (image state write, `confirm` false).
    public static let test = FlowPhase(rawValue: "test")
    /// Confirming the running image (image state write, `confirm` true).
    public static let confirm = FlowPhase(rawValue: "confirm")
}
