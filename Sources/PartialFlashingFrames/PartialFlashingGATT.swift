import Transport

/// The partial-flashing service of MakeCode's runtime on micro:bit and Calliope mini boards:
/// one characteristic that takes commands (Write and Write Without Response) and answers with
/// notifications (CODAL `MicroBitPartialFlashingService.cpp`, DAL for the V1;
/// docs/protocols/partial-flashing.md §1).
public enum PartialFlashingGATT {
    /// The service's UUID.
    public static let service = BLEUUID("e97dd91d-251d-470a-a062-fa1922dfa9a8")
    /// Its one characteristic: commands in, notifications out.
    public static let characteristic = GATTCharacteristic(
        service: service, characteristic: BLEUUID("e97d3b10-251d-470a-a062-fa1922dfa9a8"))
}
