import Testing
@testable import Transport

/// A tiny flow: starts a timer named "t", finishes with the number of notifications seen
/// when the timer fires.
private struct CountingFlow: FlowMachine {
    var seen = 0
    var outcome: Result<Int, any Error>?
    mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch event {
        case .start: return [.startTimer(TimerID("t"), .milliseconds(10)), .startTimer(TimerID("u"), .seconds(1))]
        case .notification: seen += 1; return []
        case .timerFired(TimerID("t")): outcome = .success(seen); return [.finish]
        default: return []
        }
    }
}

@Suite struct ChildFlowTests {
    private let info = ConnectionInfo(services: [], mtu: 23)
    private let pf = GATTCharacteristic(
        service: BLEUUID("e97dd91d-251d-470a-a062-fa1922dfa9a8"),
        characteristic: BLEUUID("e97d3b10-251d-470a-a062-fa1922dfa9a8"))

    @Test func scopesTimersAndCancelsLeftoversOnFinish() throws {
        var child = ChildFlow(CountingFlow(), scope: "a.")
        let start = child.handle(.start(info), now: .zero)
        #expect(
            start.actions == [.startTimer(TimerID("a.t"), .milliseconds(10)), .startTimer(TimerID("a.u"), .seconds(1))])
        _ = child.handle(.notification(pf, [1]), now: .zero)
        _ = child.handle(.notification(pf, [2]), now: .zero)
        let end = child.handle(.timerFired(TimerID("a.t")), now: .milliseconds(10))
        #expect(end.actions == [.cancelTimer(TimerID("a.u"))])
        #expect(try end.outcome?.get() == 2)
        #expect(child.isFinished)
    }

    @Test func ignoresOtherScopesAndStaleTimers() {
        var child = ChildFlow(CountingFlow(), scope: "a.")
        _ = child.handle(.start(info), now: .zero)
        #expect(!child.accepts(.timerFired(TimerID("b.t"))))
        let other = child.handle(.timerFired(TimerID("b.t")), now: .zero)
        #expect(other.actions.isEmpty && other.outcome == nil)
        let unknown = child.handle(.timerFired(TimerID("a.never")), now: .zero)
        #expect(unknown.actions.isEmpty && unknown.outcome == nil)
    }

    @Test func ignoresEventsAfterFinishing() {
        var child = ChildFlow(CountingFlow(), scope: "a.")
        _ = child.handle(.start(info), now: .zero)
        _ = child.handle(.timerFired(TimerID("a.t")), now: .zero)
        let after = child.handle(.notification(pf, [1]), now: .zero)
        #expect(after.actions.isEmpty && after.outcome == nil)
    }
}
