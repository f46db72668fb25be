import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames

/// The shared radio, modes and connections, faults and determinism.
@Suite struct SimulationLinkTests {
    static let pf = PartialFlashingGATT.characteristic

    @Test func twoConnectionsShareTheRadioWithoutOverlap() throws {
        let link = LinkProfile.fast
        var sim = Simulation(link: link)
        sim.logsAirSlots = true
        var ids: [BoardID] = []
        var flows: [FlowOnBoard] = []
        var images: [MemoryImage] = []
        for (n, board) in [Board.microbitV2, .calliopeMini1].enumerated() {
            let family = board.family
            let magic: UInt32 = family == .nrf51 ? 0x35400 : 0x47000
            let old = Fixture.image(family: family, magicAt: magic, programLength: 3000, seed: 3)
            let new = Fixture.image(family: family, magicAt: magic, programLength: 2000, seed: 20 + n)
            let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: board), image: old, mode: .pairing))
            ids.append(id)
            images.append(new)
            flows.append(
                FlowOnBoard(
                    ScriptedFlasher(blocks: Fixture.blocks(of: new.slice(magic..<0x80000), from: magic)), on: id))
        }
        let runs = sim.runAll(flows, deadline: .seconds(60))
        for run in runs { #expect(throws: Never.self) { try run.outcome.get() } }
        let slots = sim.radio.slots.sorted { $0.start < $1.start }
        #expect(Set(slots.map(\.connection)).count == 2)
        for (a, b) in zip(slots, slots.dropFirst()) { #expect(a.end <= b.start) }
        // Both connections started at the same instant, so one of them was pushed off its grid.
        let anchor: Int64 = 1_000_000
        #expect(slots.contains { ($0.start - anchor) % link.connectionIntervalMicroseconds != 0 })
        for (i, id) in ids.enumerated() {
            let magic: UInt32 = i == 1 ? 0x35400 : 0x47000
            #expect(try sim.board(id).readFlash(magic..<(magic + 2000)) == images[i].read(magic..<(magic + 2000)))
        }
    }

    @Test func boardWithoutBluetoothInApplicationModeIsNotConnectable() throws {
        var sim = Simulation(link: .linuxDefault)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .microbitV2)))
        let run = sim.run(Probe { _, _, _ in [.finish] }, on: id, deadline: .seconds(30))
        #expect(throws: SimulatedBoardError.self) { try run.outcome.get() }
        try sim.updateBoard(id) { $0.reset(holdingButtons: true) }
        let again = sim.run(Probe { _, _, _ in [.finish] }, on: id, deadline: .seconds(30))
        #expect(try again.outcome.get().events == ["start"])
    }

    @Test func resetIntoPairingModeDropsTheLinkAndTheBoardComesBackInPairingMode() throws {
        var sim = Simulation(link: .deviceRequested)
        let id = sim.addBoard(try SimulatedBoard(.microbitV2, bluetoothInApplicationMode: true))
        let run = sim.run(
            Probe { seen, event, _ in
                switch event {
                case .start: return [.subscribe(Self.pf), .write(Self.pf, [0xEE], .command)]
                case .notification where seen.notifications.count == 1: return [.write(Self.pf, [0xFF, 0x00], .command)]
                case .disconnected: return [.connect(after: .milliseconds(200))]
                case .connectFailed: return [.finish]
                case .connected: return [.subscribe(Self.pf), .write(Self.pf, [0xEE], .command)]
                case .notification: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(30))
        let seen = try run.outcome.get()
        #expect(seen.notifications == [[0xEE, 0x01, 0x01], [0xEE, 0x01, 0x00]])
        #expect(seen.events.contains("disconnected \(DisconnectReason.remoteTerminated)"))
        #expect(try sim.board(id).mode == .pairing)
    }

    @Test func writesToADisconnectedLinkFail() throws {
        var sim = Simulation(link: .fast)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .microbitV1), mode: .pairing))
        let run = sim.run(
            Probe { seen, event, _ in
                switch event {
                case .start: return [.disconnect]
                case .disconnected: return [.write(Self.pf, [0xEE], .command)]
                case .writeFailed: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(10))
        #expect(
            try run.outcome.get().events == [
                "start", "disconnected \(DisconnectReason.localTerminated)", "write failed"
            ])
    }

    @Test func refusedConnectionAttemptsAreCountedAndRetried() throws {
        var plan = FaultPlan(seed: 3)
        plan.refuseConnectionAttempts = [0, 1]
        var sim = Simulation(link: .fast, faults: plan)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .microbitV2), mode: .pairing))
        let run = sim.run(
            Probe { _, event, _ in
                switch event {
                case .start: return [.disconnect]
                case .disconnected, .connectFailed: return [.connect(after: .milliseconds(500))]
                case .connected: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(30))
        #expect(try run.outcome.get().connectFailures == 2)
        #expect(run.statistics.faults.refusedConnections == 2)
        #expect(run.statistics.connections == 2)
    }

    @Test func aLinkLostAtAWriteIsSeenAfterTheSupervisionTimeout() throws {
        var plan = FaultPlan(seed: 1)
        plan.disconnectAtWrite = [1]
        var sim = Simulation(link: .fast, faults: plan)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .microbitV2), mode: .pairing))
        let run = sim.run(
            Probe { seen, event, now in
                switch event {
                case .start: return [.subscribe(Self.pf), .write(Self.pf, [0xEE], .command)]
                case .notification: return [.write(Self.pf, [0x00, 0x02], .command)]
                case .disconnected:
                    seen.counter = Int(now.wholeMicroseconds)
                    return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(30))
        let seen = try run.outcome.get()
        #expect(seen.events.last == "disconnected \(DisconnectReason.supervisionTimeout)")
        #expect(run.statistics.faults.disconnects == 1)
        // Connected at 1 s; the 2-byte REGION_INFO write (9 bytes on the link layer, 152 µs on air)
        // went out in the third event and was lost there; the flow hears of it 4 s later.
        #expect(seen.counter == 1_000_000 + 3 * 7_500 + 152 + 4_000_000)
    }

    @Test func aDeviceResetMidFlashLeavesTheBoardInPairingMode() throws {
        var plan = FaultPlan(seed: 9)
        plan.resetDeviceAt = [.milliseconds(1_500)]
        var s = try SimulationTimingTests.setup(.deviceRequested, faults: plan)
        let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
        #expect(throws: ScriptedFlasher.Failure.self) { try run.outcome.get() }
        #expect(run.statistics.faults.deviceResets == 1)
        let board = try s.sim.board(s.board)
        #expect(board.flashIncomplete && board.mode == .pairing)
    }

    @Test func slowErasesAndDroppedWritesAreCounted() throws {
        var slow = FaultPlan(seed: 5)
        slow.slowErase = 1
        slow.slowEraseFactor = 4
        var s = try SimulationTimingTests.setup(.linuxDefault, faults: slow)
        var normal = try SimulationTimingTests.setup(.linuxDefault)
        let slowRun = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
        let normalRun = normal.sim.run(ScriptedFlasher(blocks: normal.blocks), on: normal.board, deadline: .seconds(60))
        #expect(slowRun.statistics.faults.slowErases == 2)
        #expect(slowRun.statistics.modelledTime - normalRun.statistics.modelledTime >= .milliseconds(2 * 3 * 85))

        var lossy = FaultPlan(seed: 5)
        lossy.dropWrite = 1
        var l = try SimulationTimingTests.setup(.linuxDefault, faults: lossy)
        let lossyRun = l.sim.run(ScriptedFlasher(blocks: l.blocks), on: l.board, deadline: .seconds(60))
        #expect(throws: ScriptedFlasher.Failure.self) { try lossyRun.outcome.get() }
        #expect(lossyRun.statistics.faults.droppedWrites == 1)
    }

    /// A STATUS request; the flow finishes 1 s later and reports the notifications it saw.
    static func statusProbe() -> Probe {
        Probe { seen, event, now in
            switch event {
            case .start:
                return [
                    .subscribe(Self.pf), .write(Self.pf, [0xEE], .command), .startTimer(TimerID("end"), .seconds(1))
                ]
            case .notification: seen.counter = Int(now.wholeMicroseconds); return []
            case .timerFired: return [.finish]
            default: return []
            }
        }
    }

    static func statusRun(_ configure: (inout FaultPlan) -> Void) throws -> SimulationRun<Probe.Seen> {
        var plan = FaultPlan(seed: 11)
        configure(&plan)
        var sim = Simulation(link: .linuxDefault, faults: plan)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .calliopeMini3), mode: .pairing))
        return sim.run(statusProbe(), on: id, deadline: .seconds(10))
    }

    @Test func notificationFaultsAreCountedOneByOne() throws {
        let clean = try Self.statusRun { _ in }
        let cleanSeen = try clean.outcome.get()
        #expect(cleanSeen.notifications == [[0xEE, 0x01, 0x00]])
        // Connected at 1 s; STATUS leaves in the first event, the answer in the second, after
        // the 5-byte CCCD response: (80 + 150 + 120 + 150) + (80 + 150 + 160) µs into that event.
        #expect(cleanSeen.counter == 1_000_000 + 2 * 30_000 + 890)
        #expect(clean.statistics.faults.total == 0)

        let dropped = try Self.statusRun { $0.dropNotification = 1 }
        #expect(try dropped.outcome.get().notifications.isEmpty)
        #expect(dropped.statistics.faults.droppedNotifications == 1)

        let doubled = try Self.statusRun { $0.duplicateNotification = 1 }
        #expect(try doubled.outcome.get().notifications == [[0xEE, 0x01, 0x00], [0xEE, 0x01, 0x00]])
        #expect(doubled.statistics.faults.duplicatedNotifications == 1)

        let late = try Self.statusRun { $0.delayNotification = 1 }
        // Held back into the next event, where it is the only packet: 80 + 150 + 160 µs.
        #expect(try late.outcome.get().counter == 1_000_000 + 3 * 30_000 + 390)
        #expect(late.statistics.faults.delayedNotifications == 1)
    }

    /// STATUS and REGION_INFO 1 in one go; the flow finishes 1 s later with the answers it saw, in
    /// order. On a micro:bit V1 (S110: no one-slot notification queue modelled) both answers go out.
    static func twoAnswersRun(
        board: Board = .microbitV1, _ configure: (inout FaultPlan) -> Void
    ) throws -> SimulationRun<Probe.Seen> {
        var plan = FaultPlan(seed: 11)
        configure(&plan)
        var sim = Simulation(link: .linuxDefault, faults: plan)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: board), mode: .pairing))
        return sim.run(
            Probe { _, event, _ in
                switch event {
                case .start:
                    return [
                        .subscribe(Self.pf), .write(Self.pf, [0xEE], .command), .write(Self.pf, [0x00, 0x01], .command),
                        .startTimer(TimerID("end"), .seconds(1))
                    ]
                case .timerFired: return [.finish]
                default: return []
                }
            }, on: id, deadline: .seconds(10))
    }

    @Test func aLateNotificationKeepsItsPlaceWhileAHostileReorderingDoesNot() throws {
        let clean = try Self.twoAnswersRun { _ in }.outcome.get().notifications.map(\.first)
        #expect(clean == [0xEE, 0x00])
        // Late (the link layer sends it again in the next event): everything behind it waits.
        let late = try Self.twoAnswersRun { $0.delayNotification = 1 }
        #expect(try late.outcome.get().notifications.map(\.first) == [0xEE, 0x00])
        #expect(late.statistics.faults.delayedNotifications == 2)
        // Reordered (impossible on a BLE link, a hostile fault): the first answer slips behind the second.
        let reordered = try Self.twoAnswersRun { $0.reorderNotification = 1 }
        #expect(try reordered.outcome.get().notifications.map(\.first) == [0x00, 0xEE])
        #expect(reordered.statistics.faults.reorderedNotifications >= 1)
    }

    @Test func theSameSeedGivesTheSameTrace() throws {
        var plan = FaultPlan(seed: 2024)
        plan.dropNotification = 0.01
        plan.duplicateNotification = 0.05
        plan.delayNotification = 0.05
        func once(_ p: FaultPlan) throws -> (String, RunStatistics) {
            var s = try SimulationTimingTests.setup(.fast, faults: p)
            let run = s.sim.run(ScriptedFlasher(blocks: s.blocks), on: s.board, deadline: .seconds(60))
            return (run.trace.jsonLines(), run.statistics)
        }
        let (a, sa) = try once(plan)
        let (b, sb) = try once(plan)
        #expect(!a.isEmpty && a == b && sa == sb)
        #expect(sa.faults.duplicatedNotifications + sa.faults.delayedNotifications + sa.faults.droppedNotifications > 0)
        var other = plan
        other.seed = 2025
        #expect(try once(other).0 != a)
    }

    @Test func deadlineEndsARunThatWaitsForever() throws {
        var sim = Simulation(link: .fast)
        let id = sim.addBoard(try SimulatedBoard(profile: BoardProfile(board: .microbitV2), mode: .pairing))
        let run = sim.run(
            Probe { _, event, _ in
                if case .timerFired = event { return [.startTimer(TimerID("again"), .seconds(1))] }
                return [.startTimer(TimerID("again"), .seconds(1))]
            }, on: id, deadline: .seconds(5))
        #expect(throws: SimulatedBoardError.deadlineExceeded(.seconds(5))) { try run.outcome.get() }
        let stalled = sim.run(Probe { _, _, _ in [] }, on: id, deadline: .seconds(5))
        #expect(throws: SimulatedBoardError.flowStalled) { try stalled.outcome.get() }
    }
}
