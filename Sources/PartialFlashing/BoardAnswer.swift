import PartialFlashingFrames
import Transport

/// A notification a reader of the board (`MemoryMapReader`, `ReadBackReader`) received: its
/// trace line and what it is. Bytes that are no partial-flashing answer fail the reader that
/// waits for one, and are ignored by one that does not.
enum BoardAnswer {
    case answer(PartialFlashingNotification)
    case ignored
    case malformed(PartialFlashError)

    /// Decodes `bytes` for a reader that is `waiting` for an answer (or not).
    static func read(_ bytes: [UInt8], waiting: Bool) -> (trace: FlowAction, answer: BoardAnswer) {
        let trace = FlowAction.report(.flow(AnyFlowReport(PartialFlashReport.received(bytes))))
        do {
            return (trace, .answer(try PartialFlashingNotification(bytes: bytes)))
        } catch {
            guard waiting else { return (trace, .ignored) }
            return (
                trace,
                .malformed(
                    .malformedNotification(bytes: bytes, problem: (error as? FrameError) ?? .badValue("\(error)")))
            )
        }
    }

    /// The trace line of bytes ignored as no partial-flashing answer.
    static let ignoredTrace = FlowAction.report(.flow(AnyFlowReport(PartialFlashReport.ignoredNotPartialFlashing)))
}
