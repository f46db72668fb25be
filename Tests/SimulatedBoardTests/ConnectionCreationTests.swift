import FirmwareImage
import LinkModel
import Testing
@testable import SimulatedBoard

/// One LE connection creation at a time per controller (Linux `hci_connect_le`), each to the
/// waiting board heard first: a class asked to connect at once is connected one board after
/// another, a lone board as before, and two adapters in parallel.
@Suite struct ConnectionCreationTests {
    /// When each board's first connection came up, in seconds from the start, in board order.
    static func connectedAt(_ count: Int, adapters: [AdapterProfile] = [.unlimited]) throws -> [Double] {
        var sim = Simulation(link: .deviceRequested, adapters: adapters)
        let (flows, _) = try AdapterLimitTests.classSet(count, in: &sim)
        let runs = sim.runAll(flows, deadline: .seconds(300))
        for run in runs { #expect(throws: Never.self) { try run.outcome.get() } }
        let trace = runs.first?.trace.entries ?? []
        return flows.map { flow in
            let first = trace.first { $0.board == flow.board.index && $0.text.hasPrefix("connected") }
            return Double(first?.t ?? -1) / 1_000_000
        }
    }

    @Test func aLoneBoardIsConnectedAfterTheProfilesSetupTime() throws {
        #expect(try Self.connectedAt(1) == [1.0])
    }

    @Test func boardsAskedAtOnceAreConnectedOneAfterAnotherEachWhenHeard() throws {
        // Four boards in pairing mode (200 ms) on a 15 ms link. The controller hears the first
        // of k waiting boards after 200 / (k + 1) ms on average, connects at that board's next
        // advertisement 200 ms later, and completes one interval after: gaps of 40, 50, 66.7
        // and 100 ms, each + 215 ms. A lone board waits 100 + 215 ms of its 1 s setup, so the
        // first of four is connected 60 ms sooner.
        let times = try Self.connectedAt(4)
        let expected = [0.940, 1.205, 1.486_667, 1.801_667]
        for (got, want) in zip(times.sorted(), expected) {
            #expect(abs(got - want) < 0.000_002, "\(times)")
        }
        #expect(Set(times).count == 4)
    }

    @Test func twoAdaptersCreateTheirConnectionsAtTheSameTime() throws {
        let times = try Self.connectedAt(2, adapters: [.csr8510, .csr8510])
        #expect(times == [1.0, 1.0])
    }

    @Test func theFirstOfSeveralWaitingBoardsIsHeardSooner() {
        #expect(Advertising.firstHeard(among: [.milliseconds(200)]) == .milliseconds(100))
        #expect(Advertising.firstHeard(among: Array(repeating: .milliseconds(200), count: 4)) == .milliseconds(40))
        // A board in application mode (50 ms) among boards in pairing mode (200 ms): heard
        // sooner than it alone (25 ms), never sooner than the boards alike would give.
        let mixed = Advertising.firstHeard(among: [.milliseconds(50), .milliseconds(200), .milliseconds(200)])
        #expect(mixed < .milliseconds(25) && mixed > .milliseconds(50) / 4)
        #expect(Advertising.firstHeard(among: []) == .zero)
    }
}
