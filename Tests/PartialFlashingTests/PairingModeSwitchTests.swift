import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// The restart into pairing mode that comes only after a decision to write partially.
@Suite struct PairingModeSwitchTests {
    let answer = PartialFlashTimer.answer
    let decided = BoardMemoryMap(
        protocolVersion: 1, mode: .application,
        runtime: RegionInfo(id: 1, start: 0x1C000, end: 0x46B00, hash: runtimeHash),
        program: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash))

    @Test func restartsIntoPairingModeAndReadsBothRegionsAgain() {
        var modeSwitch = PairingModeSwitch(decided: decided, family: .nrf52833)
        let first = modeSwitch.begin()
        #expect(reports(first).contains(.phase(.switchingToPairingMode)))
        #expect(
            effects(first) == [.write(pf, [0xFF, 0x00], .command), .startTimer(PartialFlashTimer.reboot, .seconds(10))])
        #expect(
            effects(modeSwitch.handle(.disconnected(.remoteTerminated), now: .seconds(1)))
                == [.cancelTimer(PartialFlashTimer.reboot), .connect(after: .zero)])  // the attempt waits for the board
        #expect(
            effects(modeSwitch.handle(.connected(link), now: .seconds(2)))
                == [.subscribe(pf), .write(pf, [0xEE], .command), .startTimer(answer, .seconds(2))])
        let read = modeSwitch.run([status(.pairing), v2Runtime, v2Program])
        #expect(writes(read) == [[0x00, 0x01], [0x00, 0x02]], "REGION_INFO 2 last: the barrier before writing")
        let map = try? modeSwitch.outcome?.get()
        #expect(map?.mode == .pairing && map?.program == decided.program)
        #expect(modeSwitch.switches == 1)
    }

    @Test func switchesAgainWhenTheBoardComesBackRunningItsProgramThenGivesUp() {
        var modeSwitch = PairingModeSwitch(
            decided: decided, family: .nrf52833, settings: PartialFlashSettings(modeSwitchLimit: 2))
        _ = modeSwitch.begin()
        let again = modeSwitch.run([
            .disconnected(.remoteTerminated), .connected(link), status(.application), v2Runtime, v2Program
        ])
        #expect(writes(again).last == [0xFF, 0x00])
        _ = modeSwitch.run([
            .disconnected(.remoteTerminated), .connected(link), status(.application), v2Runtime, v2Program
        ])
        #expect(modeSwitch.partialFlashError == .staysInApplicationMode(switches: 2))
        #expect(modeSwitch.partialFlashError?.description.contains("Bluetooth mode by hand") == true)
    }

    @Test func closesTheLinkWhenTheRestartIsIgnored() {
        var modeSwitch = PairingModeSwitch(decided: decided, family: .nrf52833)
        _ = modeSwitch.begin()
        let closing = modeSwitch.handle(.timerFired(PartialFlashTimer.reboot), now: .seconds(10))
        #expect(effects(closing) == [.disconnect, .startTimer(PartialFlashTimer.reboot, .seconds(10))])
        _ = modeSwitch.handle(.timerFired(PartialFlashTimer.reboot), now: .seconds(20))
        #expect(
            modeSwitch.partialFlashError
                == .rebootNotObserved(after: "the switch to pairing mode (FF 00)", waited: .seconds(10)))
    }

    @Test func refusesToWriteWhenTheRegionsChangedMeanwhile() {
        var modeSwitch = PairingModeSwitch(decided: decided, family: .nrf52833)
        _ = modeSwitch.begin()
        _ = modeSwitch.run([
            .disconnected(.remoteTerminated), .connected(link), status(.pairing), v2Runtime,
            region(2, 0x47000, 0x73000, newProgramHash)
        ])
        guard case .boardChanged? = modeSwitch.partialFlashError else {
            Issue.record("expected boardChanged, got \(String(describing: modeSwitch.partialFlashError))")
            return
        }
        #expect(modeSwitch.partialFlashError?.description.contains("nothing was written") == true)
    }
}
