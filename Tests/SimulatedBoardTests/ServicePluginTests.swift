import Foundation
import LinkModel
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames

/// A second service on the board: how the SMP server will plug in.
@Suite struct ServicePluginTests {
    static let echo = GATTCharacteristic(
        service: BLEUUID("0000abcd-0000-1000-8000-00805f9b34fb"),
        characteristic: BLEUUID("0000abce-0000-1000-8000-00805f9b34fb"))

    /// Answers each write, 10 ms of device work later, with its length and the boot count.
    struct EchoService: SimulatedService {
        let uuid = ServicePluginTests.echo.service
        let characteristics: Set<GATTCharacteristic> = [ServicePluginTests.echo]
        mutating func didWrite(
            _ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
            device: inout DeviceState, effects: inout ServiceEffects
        ) {
            effects.schedule(after: .milliseconds(10), tag: bytes.count)
        }
        mutating func workDone(tag: Int, device: inout DeviceState, effects: inout ServiceEffects) {
            effects.notify(ServicePluginTests.echo, [UInt8(tag), UInt8(device.bootCount)])
        }
        mutating func didBoot(device: DeviceState) {}
    }

    @Test func writesWorkAndNotificationsReachTheRightService() throws {
        var board = try SimulatedBoard(profile: BoardProfile(board: .microbitV2), mode: .pairing)
        board.addService(EchoService())
        var sim = Simulation(link: .fast)
        let id = sim.addBoard(board)
        let pf = PartialFlashingGATT.characteristic
        let run = sim.run(
            Probe { seen, event, now in
                switch event {
                case let .start(info):
                    seen.counter = info.services.count
                    return [
                        .subscribe(Self.echo), .subscribe(pf), .write(Self.echo, [1, 2, 3], .request),
                        .write(pf, [0xEE], .command)
                    ]
                case .notification where seen.notifications.count == 2: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(5))
        let seen = try run.outcome.get()
        #expect(seen.counter == 2)
        // STATUS comes back in the next event; the echo waits for its 10 ms of work (2 events at 7.5 ms).
        #expect(seen.notifications == [[0xEE, 0x01, 0x00], [3, 0]])
    }
}
extension ServicePluginTests {
    /// Ten 244-byte writes (251 bytes on the link layer: 2468 µs per exchange).
    func bigWrites(_ link: LinkProfile) throws -> Simulation {
        var board = try SimulatedBoard(
            profile: BoardProfile(board: .microbitV2, attMTU: 247, dataLength: 251), mode: .pairing)
        board.addService(EchoService())
        var sim = Simulation(link: link)
        sim.logsAirSlots = true
        let id = sim.addBoard(board)
        let run = sim.run(
            Probe { seen, event, _ in
                switch event {
                case .start:
                    return Array(
                        repeating: FlowAction.write(Self.echo, [UInt8](repeating: 7, count: 244), .command), count: 10)
                        + [.startTimer(TimerID("end"), .seconds(1))]
                case .timerFired: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(5))
        #expect(run.statistics.centralPackets == 10 && run.statistics.centralBytes == 2510)
        return sim
    }

    @Test func anEventHoldsNoMoreThanFitsBeforeTheNextOne() throws {
        let fast = try bigWrites(.fast)
        // 7.5 ms fits two such exchanges, not three: five events carry the ten writes.
        #expect(fast.radio.slots.count == 5)
        #expect(fast.radio.slots.allSatisfy { $0.end - $0.start == 2 * 2468 })
        let slow = try bigWrites(.linuxDefault)
        // 30 ms fits six (the packets-per-event limit): two events.
        #expect(slow.radio.slots.map { $0.end - $0.start } == [6 * 2468, 4 * 2468])
    }
}

@Suite struct TraceTests {
    @Test func traceIsInTimeOrderAndAccountsForEveryWriteNotificationAndEvent() throws {
        var s = try SimulationTimingTests.setup(.fast, length: 640)
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(5))
        _ = try run.outcome.get()
        let entries = run.trace.entries
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.t <= $1.t })
        #expect(entries.filter { $0.kind == .write }.count == run.statistics.writes)
        #expect(entries.filter { $0.kind == .notification }.count == run.statistics.notificationsReceived)
        #expect(entries.filter { $0.kind == .event }.count == run.statistics.connectionEvents)
        #expect(entries.last?.kind == .boot)
        let lines = run.trace.jsonLines().split(separator: "\n")
        #expect(lines.count == entries.count)
        let decoded = try lines.map { try JSONDecoder().decode(TraceEntry.self, from: Data($0.utf8)) }
        #expect(decoded == entries)
    }
}
