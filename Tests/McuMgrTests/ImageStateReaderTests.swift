import McuMgr
import SMP
import Testing
import Transport
import PartialFlashingFrames

/// The image-state read `bitflash info` runs: one request, the slots from the answer, and a
/// clear failure when the board has no SMP service, stays silent or drops the link.
@Suite struct ImageStateReaderTests {
    static let connection = ConnectionInfo(services: [SMPGATT.service], mtu: 247, name: "board")

    static func device() -> FakeImageDevice {
        var device = FakeImageDevice(
            primary: .init(bytes: [1, 2, 3, 4], hash: [UInt8](repeating: 0xAB, count: 32), version: "1.2.3"))
        device.secondary = .init(bytes: [5, 6], hash: [UInt8](repeating: 0xCD, count: 32), version: "2.0.0")
        return device
    }

    @Test("reads both slots from the device's answer, with a trace of the frames")
    func readsTheSlots() throws {
        var device = Self.device()
        var reader = ImageStateReader(traceBytes: 8)
        let actions = reader.handle(.start(Self.connection), now: .zero)
        #expect(actions.contains(.subscribe(SMPGATT.characteristic)))
        var answers: [[UInt8]] = []
        var traces: [McuMgrReport] = []
        for action in actions {
            if case let .write(characteristic, bytes, _) = action, characteristic == SMPGATT.characteristic {
                answers += device.receive(write: bytes).answers
            }
            if case let .report(.flow(r)) = action, let value = r.value(as: McuMgrReport.self) { traces.append(value) }
        }
        #expect(answers.count == 1)
        var last: [FlowAction] = []
        for answer in answers {
            last = reader.handle(.notification(SMPGATT.characteristic, answer), now: .milliseconds(30))
        }
        #expect(last.contains(.finish))
        let slots = try #require(try reader.outcome?.get())
        #expect(slots.map(\.slot) == [0, 1])
        #expect(slots.map(\.version) == ["1.2.3", "2.0.0"])
        let request = try SMPFrame(request: ImageStateReadRequest(), sequence: 0).encoded()
        #expect(traces == [.stateReadFrame(sent: true, bytes: request, shownBytes: 8)])
    }

    @Test("a board without SMP, a silent board and a lost link each end the read with a failure")
    func failures() {
        var noSMP = ImageStateReader()
        _ = noSMP.handle(
            .start(ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 247, name: "b")), now: .zero)
        #expect(Self.failure(of: noSMP).contains("no McuMgr (SMP) service"))

        var silent = ImageStateReader()
        let started = silent.handle(.start(Self.connection), now: .zero)
        let timer = started.compactMap { action -> TimerID? in
            if case let .startTimer(id, _) = action { return id }
            return nil
        }.first
        if let timer { _ = silent.handle(.timerFired(timer), now: .seconds(5)) }
        #expect(Self.failure(of: silent).contains("did not answer"))

        var dropped = ImageStateReader()
        _ = dropped.handle(.start(Self.connection), now: .zero)
        _ = dropped.handle(.disconnected(.supervisionTimeout), now: .milliseconds(100))
        #expect(Self.failure(of: dropped).contains("link dropped"))
    }

    static func failure(of reader: ImageStateReader) -> String {
        guard case let .failure(error)? = reader.outcome else { return "no failure" }
        return "\(error)"
    }
}
