import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard
import PartialFlashingFrames
import SMP

/// Recording what a flow was told and replaying it: a recorded run replays line for line, a
/// changed recording shows where the client parts from it.
@Suite struct TraceReplayTests {
    @Test func everyKindOfFlowEventSurvivesItsTraceLine() {
        let info = ConnectionInfo(
            services: [PartialFlashingGATT.service, SMPGATT.service], mtu: 23,
            name: "BBC micro:bit [zotup]", connectionInterval: .microseconds(15_000))
        let events: [FlowEvent] = [
            .start(info), .connected(ConnectionInfo(services: [], mtu: 247)),
            .notification(PartialFlashingGATT.characteristic, [0x01, 0xFF]), .timerFired(PartialFlashTimer.block),
            .disconnected(.remoteTerminated), .disconnected(.localTerminated), .disconnected(.supervisionTimeout),
            .disconnected(.other("le-connection-abort-by-local"))
        ]
        for e in events { #expect(RecordedEvent.decode(RecordedEvent.encode(e)) == e, "\(RecordedEvent.encode(e))") }
        // Transport errors keep their words.
        let failed = RecordedEvent.decode(RecordedEvent.encode(.connectFailed(.connectFailed("refused"))))
        #expect(failed == .connectFailed(.connectFailed("could not connect: refused")))
        #expect(RecordedEvent.decode("notification nonsense") == nil)
        #expect(RecordedEvent.decode("frobnicate") == nil)
    }

    struct Recording {
        var lines: [TraceReplay.Line]
        var flow: PartialFlashFlow
    }

    /// A partial flash of a V2 program over a link that loses notifications and drops once.
    static func record() throws -> Recording {
        let old = Fixture.image(family: .nrf52833, magicAt: 0x47000, programLength: 3000, seed: 3)
        let new = Fixture.image(
            family: .nrf52833, magicAt: 0x47000, programLength: 9000, seed: 5,
            programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])
        let program = try #require(MakeCodeProgram.find(in: new, family: .nrf52833))
        var faults = FaultPlan(seed: 3)
        faults.dropNotification = 0.05
        faults.disconnectAtWrite = [150]
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let id = sim.addBoard(
            try SimulatedBoard(.microbitV2, image: old, mode: .pairing, bluetoothInApplicationMode: true))
        let flow = PartialFlashFlow(image: new, program: program, family: .nrf52833, settings: .overALink)
        let run = sim.run(flow, on: id, deadline: .seconds(300))
        guard case .success(.flashed) = run.outcome else {
            Issue.record("the recorded run failed: \(run.outcome)")
            return Recording(lines: [], flow: flow)
        }
        let lines = run.trace.entries.enumerated().map {
            TraceReplay.Line(
                number: $0.offset + 1, t: $0.element.t, kind: $0.element.kind.rawValue, text: $0.element.text)
        }
        #expect(run.statistics.faults.droppedNotifications > 0)
        return Recording(lines: lines, flow: flow)
    }

    @Test func aRecordedRunReplaysLineForLineToTheSameOutcome() throws {
        let rec = try Self.record()
        let report = TraceReplay.run(rec.flow, lines: rec.lines)
        #expect(report.divergence == nil, "\(report.divergence.map { "\($0)" } ?? "")")
        #expect(report.matched == rec.lines.filter(TraceReplay.isOutput).count)
        guard case .success(.flashed) = report.machine.outcome else {
            Issue.record("the replay ended \(String(describing: report.machine.outcome))")
            return
        }
    }

    @Test func aChangedAnswerShowsWhereTheClientPartsFromTheRecording() throws {
        let rec = try Self.record()
        var lines = rec.lines
        // The 20th block's acknowledgement becomes "out of order": the client resends that block
        // with new packet numbers, where the recording moved on to the next block.
        let acks = lines.indices.filter { lines[$0].kind == "input" && lines[$0].text.hasSuffix(" 01FF") }
        let changed = acks[19]
        lines[changed].text = String(lines[changed].text.dropLast(4)) + "01AA"
        let report = TraceReplay.run(rec.flow, lines: lines)
        let d = try #require(report.divergence)
        #expect(d.line > lines[changed].number)
        #expect(d.recorded.hasPrefix("write command 01"))
        #expect(d.replayed.hasPrefix("sent write command 01"))
        #expect(d.recorded != "write " + d.replayed.dropFirst(10))
    }
}
