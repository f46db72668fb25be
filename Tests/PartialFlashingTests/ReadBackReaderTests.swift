import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// Reading a restarted board back: STATUS and REGION_INFO 2 one connection interval apart, and
/// region 1 only from a board in pairing mode.
@Suite struct ReadBackReaderTests {
    let interval = Duration.milliseconds(30)
    var pacedLink: ConnectionInfo {
        var info = link
        info.connectionInterval = interval
        return info
    }

    func newProgramRegion() -> FlowEvent { region(2, 0x47000, 0x73000, newProgramHash) }

    @Test func sendsRegionInfo2OneIntervalAfterStatusWithoutWaitingForItsAnswer() throws {
        var reader = ReadBackReader(family: .nrf52833)
        let first = reader.handle(.start(pacedLink), now: .zero)
        #expect(writes(first) == [[0xEE]])
        #expect(effects(first).contains(.startTimer(ReadBackReader.pace, interval)))
        let paced = reader.handle(.timerFired(ReadBackReader.pace), now: interval)
        #expect(writes(paced) == [[0x00, 0x02]], "REGION_INFO 2 goes before STATUS is answered")
        let rest = reader.run([status(.application), newProgramRegion()], at: interval * 2)
        #expect(writes(rest).isEmpty && rest.last == .finish)
        let read = try #require(try reader.outcome?.get())
        #expect(read.mode == .application && read.program.hash == newProgramHash)
        #expect(read.runtime == nil && read.map == nil, "region 1 is not asked of a board in application mode")
    }

    @Test func asksRegionInfo2AfterStatusWhenTheIntervalIsNotKnown() throws {
        var reader = ReadBackReader(family: .nrf52833)
        let first = reader.handle(.start(link), now: .zero)
        #expect(writes(first) == [[0xEE]])
        #expect(!effects(first).contains { if case .startTimer(ReadBackReader.pace, _) = $0 { true } else { false } })
        let answered = reader.run([status(.application)])
        #expect(writes(answered) == [[0x00, 0x02]])
        _ = reader.run([newProgramRegion()])
        #expect(
            try reader.outcome?.get().program == RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: newProgramHash))
    }

    @Test func readsRegion1LastFromABoardInPairingMode() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(pacedLink), now: .zero)
        _ = reader.handle(.timerFired(ReadBackReader.pace), now: interval)
        let afterProgram = reader.run([status(.pairing), v2Program], at: interval * 2)
        #expect(writes(afterProgram) == [[0x00, 0x01]], "a REGION_INFO last: the board's packet counters are 0")
        #expect(reader.outcome == nil)
        _ = reader.run([v2Runtime])
        let map = try #require(try reader.outcome?.get().map)
        #expect(map.mode == .pairing && map.runtime.hash == runtimeHash && map.program.hash == oldProgramHash)
    }

    @Test func aLostStatusAnswerIsAskedAgainAndThePacedAnswerIsKept() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(pacedLink), now: .zero)
        _ = reader.handle(.timerFired(ReadBackReader.pace), now: interval)
        // STATUS's answer is lost; REGION_INFO 2's arrives.
        #expect(writes(reader.run([newProgramRegion()], at: interval * 3)).isEmpty)
        let again = reader.handle(.timerFired(PartialFlashTimer.answer), now: .seconds(2))
        #expect(writes(again) == [[0xEE]])
        let done = reader.run([status(.application)], at: .seconds(3))
        #expect(writes(done).isEmpty, "REGION_INFO 2 was answered already")
        #expect(try reader.outcome?.get().mode == .application)
    }

    @Test func aProgramAnswerLostBehindStatusIsAskedAgainAfterFourIntervalsNotTheTimeout() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(pacedLink), now: .zero)
        _ = reader.handle(.timerFired(ReadBackReader.pace), now: interval)
        // Both requests left in one pushed-back event: STATUS is answered, REGION_INFO 2's answer lost.
        let statusOnly = reader.run([status(.application)], at: interval * 2)
        #expect(effects(statusOnly).contains(.startTimer(PartialFlashTimer.answer, interval * 4)))
        let again = reader.handle(.timerFired(PartialFlashTimer.answer), now: interval * 6)
        #expect(writes(again) == [[0x00, 0x02]])
        #expect(
            effects(again).contains(.startTimer(PartialFlashTimer.answer, PartialFlashSettings().answerTimeout)),
            "the request asked again gets the whole answer timeout")
        _ = reader.run([newProgramRegion()], at: interval * 8)
        #expect(try reader.outcome?.get().program.hash == newProgramHash)
    }

    @Test func aProgramAnswerOnlyDelayedPastFourIntervalsStillCounts() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(pacedLink), now: .zero)
        _ = reader.handle(.timerFired(ReadBackReader.pace), now: interval)
        _ = reader.run([status(.application)], at: interval * 2)
        _ = reader.handle(.timerFired(PartialFlashTimer.answer), now: interval * 6)
        // The first request's answer arrives after all: it reads the same flash as the second's.
        let late = reader.run([newProgramRegion()], at: interval * 7)
        #expect(late.last == .finish)
        #expect(try reader.outcome?.get().program.hash == newProgramHash)
        #expect(
            reader.handle(.notification(PartialFlashingGATT.characteristic, [0x00, 0x02]), now: interval * 8).isEmpty)
    }

    @Test func withoutAPaceTheProgramAnswerGetsTheWholeTimeout() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(link), now: .zero)
        let asked = reader.run([status(.application)])
        #expect(effects(asked).contains(.startTimer(PartialFlashTimer.answer, PartialFlashSettings().answerTimeout)))
    }

    @Test func aRegionThatCannotExistOnTheBoardFailsTheRead() throws {
        var reader = ReadBackReader(family: .nrf52833)
        _ = reader.handle(.start(link), now: .zero)
        _ = reader.run([status(.application), region(2, 0x47000, 0x90000, newProgramHash)])
        #expect(reader.outcome.map { (try? $0.get()) == nil } == true)
    }
}
