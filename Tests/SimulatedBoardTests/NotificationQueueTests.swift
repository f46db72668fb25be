import FirmwareImage
import LinkModel
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames

/// When a CODAL board's notification never leaves it: before the client wrote the CCCD in this
/// connection, and while the S113 queue of one still holds an earlier notification.
@Suite struct NotificationQueueTests {
    static let pf = PartialFlashingGATT.characteristic

    /// Runs `probe` against a Calliope mini 3 (CODAL, S113) in pairing mode.
    static func run(_ probe: Probe, board: Board = .calliopeMini3) throws -> SimulationRun<Probe.Seen> {
        var sim = Simulation(link: .linuxDefault, faults: FaultPlan(seed: 3))
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: board), mode: .pairing))
        return sim.run(probe, on: id, deadline: .seconds(20))
    }

    /// CODAL `MicroBitBLEService.cpp` `onWrite` sets its CCCD copy only from a CCCD write in this
    /// connection and `onBleEvent` clears it at every disconnect; `MicroBitBLEChar.cpp`
    /// `notifyChrValue` sends nothing while the copy is off.
    @Test func codalDropsEveryNotificationUntilTheCCCDIsWrittenInThisConnection() throws {
        let run = try Self.run(
            Probe { seen, event, _ in
                switch event {
                case .start:
                    // STATUS before any CCCD write: answered into the void.
                    return [.write(Self.pf, [0xEE], .command), .startTimer(TimerID("step"), .seconds(1))]
                case .timerFired where seen.counter == 0:
                    seen.counter = 1
                    return [.subscribe(Self.pf), .write(Self.pf, [0xEE], .command)]
                case .notification where seen.counter == 1:
                    seen.counter = 2
                    return [.disconnect]
                case .disconnected: return [.connect(after: .milliseconds(100))]
                case .connected:
                    // A new connection: the copy was cleared at the disconnect.
                    return [.write(Self.pf, [0xEE], .command), .startTimer(TimerID("step"), .seconds(1))]
                case .timerFired where seen.counter == 2:
                    seen.counter = 3
                    return [.subscribe(Self.pf), .write(Self.pf, [0xEE], .command)]
                case .notification: return [.finish]
                default: return []
                }
            })
        let seen = try run.outcome.get()
        // Four STATUS requests, two answers: only those after a CCCD write in the same connection.
        #expect(seen.notifications == [[0xEE, 0x01, 0x00], [0xEE, 0x01, 0x00]])
        #expect(run.statistics.writes == 4)
        #expect(run.trace.entries.filter { $0.text.contains("not sent: no subscribed client") }.count == 2)
    }

    @Test func aSecondNotificationInTheSameConnectionEventIsLostWhileTheQueueOfOneIsFull() throws {
        // STATUS and REGION_INFO 1 leave in one connection event: the STATUS answer takes the
        // only queue slot, the REGION_INFO answer finds it full and is lost without a word.
        let together = try SimulationLinkTests.twoAnswersRun(board: .calliopeMini3) { _ in }
        #expect(try together.outcome.get().notifications.map(\.first) == [0xEE])
        #expect(together.statistics.notificationsLostQueueFull == 1)
        #expect(together.statistics.faults.total == 0)

        // The same two requests, the second sent once the first answer arrived: both answered.
        let oneByOne = try Self.run(
            Probe { seen, event, _ in
                switch event {
                case .start:
                    return [
                        .subscribe(Self.pf), .write(Self.pf, [0xEE], .command),
                        .startTimer(TimerID("end"), .seconds(1))
                    ]
                case .notification where seen.notifications.count == 1:
                    return [.write(Self.pf, [0x00, 0x01], .command)]
                case .timerFired: return [.finish]
                default: return []
                }
            })
        #expect(try oneByOne.outcome.get().notifications.map(\.first) == [0xEE, 0x00])
        #expect(oneByOne.statistics.notificationsLostQueueFull == 0)

        // S110 on a micro:bit V1 sizes its buffers at run time: no bound is modelled there.
        let v1 = try SimulationLinkTests.twoAnswersRun(board: .microbitV1) { _ in }
        #expect(try v1.outcome.get().notifications.map(\.first) == [0xEE, 0x00])
    }
}
