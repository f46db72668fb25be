import Transport

/// A flow and the board it runs against, for runs of several flows at once.
public struct FlowOnBoard: Sendable {
    public var machine: any FlowMachine
    public var board: BoardID
    public init(_ machine: any FlowMachine, on board: BoardID) {
        self.machine = machine
        self.board = board
    }
}

/// A board in a simulation.
public struct BoardID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let index: Int
    public var description: String { "board #\(index)" }
}

/// The outcome of any flow, with its output type erased.
func erasedOutcome<M: FlowMachine>(_ machine: M) -> Result<any Sendable, any Error>? {
    machine.outcome.map { result in result.map { $0 as any Sendable } }
}
