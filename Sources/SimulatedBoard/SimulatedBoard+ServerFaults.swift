extension SimulatedBoard {
    /// Sets the fault probabilities of the board's SMP server (busy answers, flash-write
    /// failures), keeping its slots and state. Nothing happens on a board without one.
    /// Fault campaigns turn them off for the plain run that must repair a board.
    public mutating func setServerFaults(busyAnswers: Double, flashWriteFailures: Double) {
        for i in services.indices {
            if var server = services[i] as? SMPServer {
                server.configuration.busyAnswerProbability = busyAnswers
                server.configuration.flashWriteFailureProbability = flashWriteFailures
                services[i] = server
            }
        }
    }
}
