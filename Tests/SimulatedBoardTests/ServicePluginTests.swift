import Foundation
import LinkModel
import Testing
import Transport
@testable import SimulatedBoard

/// A second service on the board: how the SMP server will plug in.
@Suite struct ServicePluginTests {
    static let echo = GATTCharacteristic(service: BLEUUID("0000abcd-0000-1000-8000-00805f9b34fb"),
                                         characteristic: BLEUUID("0000abce-0000-1000-8000-00805f9b34fb"))

    /// Answers each write, 10 ms of device work later, with its length and the boot count.
    struct EchoService: SimulatedService {
        let uuid = ServicePluginTests.echo.service
        let characteristics: Set<GATTCharacteristic> = [ServicePluginTests.echo]
        mutating func didWrite(_ bytes: [UInt8], to characteristic: GATTCharacteristic, kind: WriteKind,
                               device: inout DeviceState, effects: inout ServiceEffects) {
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
        let pf = KnownGATT.partialFlashing
        let run = sim.run(Probe { seen, event, now in
            switch event {
            case let .start(info):
                seen.counter = info.services.count
                return [.subscribe(Self.echo), .subscribe(pf), .write(Self.echo, [1, 2, 3], .request), .write(pf, [0xEE], .command)]
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
