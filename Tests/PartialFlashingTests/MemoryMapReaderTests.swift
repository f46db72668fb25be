import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing
import NordicDFUFrames

@Suite struct MemoryMapReaderTests {
    let answer = PartialFlashTimer.answer

    @Test func readsStatusThenRuntimeThenProgramRegion() {
        var reader = MemoryMapReader(family: .nrf52833)
        let first = reader.handle(.start(link), now: .zero)
        #expect(reports(first).first == .phase(.readingMemoryMap))
        #expect(effects(first) == [.subscribe(pf), .write(pf, [0xEE], .command), .startTimer(answer, .seconds(2))])
        #expect(
            effects(reader.handle(status(.pairing), now: .zero))
                == [.cancelTimer(answer), .write(pf, [0x00, 0x01], .command), .startTimer(answer, .seconds(2))])
        #expect(
            effects(reader.handle(v2Runtime, now: .zero))
                == [.cancelTimer(answer), .write(pf, [0x00, 0x02], .command), .startTimer(answer, .seconds(2))])
        #expect(effects(reader.handle(v2Program, now: .zero)) == [.cancelTimer(answer), .finish])
        let map = try? reader.outcome?.get()
        #expect(
            map
                == BoardMemoryMap(
                    protocolVersion: 1, mode: .pairing,
                    runtime: RegionInfo(id: 1, start: 0x1C000, end: 0x46B00, hash: runtimeHash),
                    program: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash)))
        #expect(map?.hasProgram == true)
    }

    @Test func retriesUnansweredStatusThenFailsNamingTheRequest() {
        var reader = MemoryMapReader(settings: PartialFlashSettings(requestAttempts: 3))
        _ = reader.handle(.start(link), now: .zero)
        let second = reader.handle(.timerFired(answer), now: .seconds(2))
        #expect(writes(second) == [[0xEE]])
        #expect(partialReports(second).contains(.noAnswerToStatus))
        #expect(writes(reader.handle(.timerFired(answer), now: .seconds(4))) == [[0xEE]])
        #expect(effects(reader.handle(.timerFired(answer), now: .seconds(6))) == [.finish])
        #expect(reader.partialFlashError == .noAnswer(request: "STATUS (EE)", attempts: 3, timeout: .seconds(2)))
    }

    @Test func retriesRegionInfoOnTimeoutAndIgnoresStaleTimers() {
        var reader = MemoryMapReader()
        _ = reader.run([.start(link), status(.pairing)])
        #expect(writes(reader.handle(.timerFired(answer), now: .seconds(2))) == [[0x00, 0x01]])
        // A timer the reader never started changes nothing.
        #expect(reader.handle(.timerFired(PartialFlashTimer.block), now: .seconds(3)).isEmpty)
        _ = reader.run([v2Runtime, v2Program])
        #expect((try? reader.outcome?.get())?.program.start == 0x47000)
    }

    @Test func readsAnApplicationModeBoardWithoutRestartingIt() {
        var reader = MemoryMapReader(family: .nrf52833)
        let actions = reader.run([.start(link), status(.application), v2Runtime, v2Program])
        #expect(writes(actions) == [[0xEE], [0x00, 0x01], [0x00, 0x02]])
        #expect(!reports(actions).contains(.phase(.switchingToPairingMode)))
        #expect((try? reader.outcome?.get())?.mode == .application)
        #expect(reader.reconnects == 0)
    }

    @Test func reconnectsAfterUnexpectedLinkLossAndFailsAfterConnectAttempts() {
        var reader = MemoryMapReader(settings: PartialFlashSettings(reconnectAttempts: 2))
        _ = reader.run([.start(link), status(.pairing)])
        let lost = reader.handle(.disconnected(.supervisionTimeout), now: .seconds(1))
        #expect(effects(lost) == [.cancelTimer(answer), .connect(after: .seconds(1))])
        #expect(
            effects(reader.handle(.connectFailed(.connectFailed("le-connection-abort-by-local")), now: .seconds(2)))
                == [.connect(after: .seconds(1))])
        let error = TransportError.connectFailed("In Progress")
        #expect(effects(reader.handle(.connectFailed(error), now: .seconds(3))) == [.finish])
        #expect(reader.partialFlashError == .reconnectFailed(attempts: 2, lastError: error))
    }

    @Test func toleratesStrayNotificationsWhileReading() {
        var reader = MemoryMapReader()
        _ = reader.handle(.start(link), now: .zero)
        let stray = reader.handle(ack, now: .zero)
        #expect(effects(stray).isEmpty)
        #expect(partialReports(stray).contains(.received([0x01, 0xFF])))
        _ = reader.run([status(.pairing), v2Runtime])
        // A repeated answer for region 1 (its request was sent twice) is not an error.
        #expect(effects(reader.handle(v2Runtime, now: .zero)).isEmpty)
        _ = reader.run([outOfOrder, v2Program])
        #expect((try? reader.outcome?.get())?.program.hash == oldProgramHash)
    }

    @Test func acceptsBoardWithoutProgramAndLeavesTheVerdictToTheDecision() {
        var reader = MemoryMapReader(family: .nrf52833)
        let zero = [UInt8](repeating: 0, count: 8)
        _ = reader.run([.start(link), status(.pairing), region(1, 0, 0, zero), region(2, 0, 0, zero)])
        #expect((try? reader.outcome?.get())?.hasProgram == false)
    }

    @Test func refusesBoardWithoutPartialFlashingService() {
        var reader = MemoryMapReader()
        let actions = reader.handle(.start(ConnectionInfo(services: [NordicGATT.secureService], mtu: 23)), now: .zero)
        #expect(effects(actions) == [.finish])
        #expect(reader.partialFlashError == .serviceMissing)
    }

    /// Hostile or broken answers end the read with a clear error, never a crash.
    @Test(
        arguments: [
            (
                [0x00, 0x02, 0x00, 0x04],
                PartialFlashError.malformedNotification(
                    bytes: [0x00, 0x02, 0x00, 0x04], problem: .badLength(type: 0, expected: 18, got: 4))
            ),
            (
                [0x00, 0x02] + [UInt8](repeating: 0x11, count: 17),
                .malformedNotification(
                    bytes: [0x00, 0x02] + [UInt8](repeating: 0x11, count: 17),
                    problem: .badLength(type: 0, expected: 18, got: 19))
            ),
            (
                [0x01, 0xFF, 0x00],
                .malformedNotification(
                    bytes: [0x01, 0xFF, 0x00],
                    problem: .badLength(type: 1, expected: 2, got: 3))
            ),
            ([], .malformedNotification(bytes: [], problem: .empty)),
            ([0x42, 0x00], .malformedNotification(bytes: [0x42, 0x00], problem: .unknownType(0x42)))
        ] as [([UInt8], PartialFlashError)])
    func failsClearlyOnMalformedAnswer(bytes: [UInt8], expected: PartialFlashError) {
        var reader = MemoryMapReader(family: .nrf52833)
        _ = reader.run([.start(link), status(.pairing), v2Runtime])
        #expect(effects(reader.handle(notify(bytes), now: .zero)) == [.cancelTimer(answer), .finish])
        #expect(reader.partialFlashError == expected)
        #expect(reader.partialFlashError?.description.isEmpty == false)
    }

    @Test(
        arguments: [
            (region(0, 0x0, 0x1C000, oldProgramHash), PartialFlashError.unexpectedRegion(requested: 2, got: 0)),
            (region(7, 0x47000, 0x73000, oldProgramHash), .unexpectedRegion(requested: 2, got: 7)),
            (
                region(2, 0, 0x73000, oldProgramHash),
                .invalidRegion(
                    RegionInfo(id: 2, start: 0, end: 0x73000, hash: oldProgramHash), .zeroStart)
            ),
            (
                region(2, 0x47000, 0x46000, oldProgramHash),
                .invalidRegion(
                    RegionInfo(id: 2, start: 0x47000, end: 0x46000, hash: oldProgramHash), .endBeforeStart)
            ),
            (
                region(2, 0x47000, 0x90000, oldProgramHash),
                .invalidRegion(
                    RegionInfo(id: 2, start: 0x47000, end: 0x90000, hash: oldProgramHash), .outsideFlash(0..<0x80000))
            ),
            (
                region(2, 0x78000, 0x7A000, oldProgramHash),
                .invalidRegion(
                    RegionInfo(id: 2, start: 0x78000, end: 0x7A000, hash: oldProgramHash),
                    .outsideApplication(0x1C000..<0x77000))
            )
        ] as [(FlowEvent, PartialFlashError)])
    func failsClearlyOnImpossibleRegion(answer event: FlowEvent, expected: PartialFlashError) {
        var reader = MemoryMapReader(family: .nrf52833)
        _ = reader.run([.start(link), status(.pairing), v2Runtime])
        #expect(effects(reader.handle(event, now: .zero)) == [.cancelTimer(answer), .finish])
        #expect(reader.partialFlashError == expected)
    }

    @Test func infersFamilyFromRuntimeRegionWhenNotGiven() {
        var reader = MemoryMapReader()
        // DAL runtime at 0x18000 makes this an nRF51: a program region past 0x40000 is impossible.
        _ = reader.run([
            .start(link), status(.pairing), region(1, 0x18000, 0x35000, runtimeHash),
            region(2, 0x47000, 0x73000, oldProgramHash)
        ])
        #expect(
            reader.partialFlashError
                == .invalidRegion(
                    RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash), .outsideFlash(0..<0x40000)))
    }
}
