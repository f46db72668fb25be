import Transport

/// The phases of a partial flash (`FlowReport.phase`), beside those every flow shares
/// (`connecting`, `reset`, `verify`, `done`).
extension FlowPhase {
    /// Reading the board's memory map (`MemoryMapReader`).
    public static let readingMemoryMap = FlowPhase(rawValue: "reading memory map")
    /// Restarting a board that runs its program in Bluetooth pairing mode (`PairingModeSwitch`).
    public static let switchingToPairingMode = FlowPhase(rawValue: "switching to pairing mode")
    /// Writing the program region block by block (`PartialFlashWriter`).
    public static let partial = FlowPhase(rawValue: "partial")
}
