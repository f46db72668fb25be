import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing
import NordicDFUFrames

/// Reading a board back after its restart, and ending an unfinished flash that keeps it in
/// pairing mode (docs/protocols/board-storage.md §5-§7).
@Suite struct ProgramCheckTests {
    let window = PartialFlashTimer.restartWindow

    func newProgramRegion() -> FlowEvent { region(2, 0x47000, 0x73000, newProgramHash) }

    /// A board whose flash holds the whole new program.
    func boardHolding(_ image: MemoryImage, _ program: MakeCodeProgram, mode: BoardMode, flashIncomplete: Bool)
        -> ModelBoard
    {
        var board = ModelBoard(family: .nrf52833, mode: mode)
        board.load(image.read(program.region), at: program.magicAddress)
        board.flashIncomplete = flashIncomplete
        return board
    }

    @Test func verifiesABoardThatComesBackRunningTheProgramInApplicationMode() throws {
        let (image, program) = makeProgram(bodySize: 9000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true)
        let first = check.begin(now: .seconds(1))
        #expect(reports(first).contains(.phase(.verify)))
        #expect(effects(first) == [.startTimer(window, .seconds(10)), .connect(after: .zero, to: .application)])
        let read = check.run([.connected(link), status(.application), newProgramRegion()], at: .seconds(2))
        #expect(writes(read) == [[0xEE], [0x00, 0x02]], "region 1 says nothing of the program: not read")
        #expect(effects(read).first == .cancelTimer(window))
        guard case let .verified(map, rewrites)? = try check.outcome?.get() else {
            Issue.record("expected verified, got \(String(describing: check.outcome))"); return
        }
        #expect(map.mode == .application && rewrites == nil)
    }

    @Test func rewritesOnePageWhenTheBoardComesBackInPairingModeThenVerifies() throws {
        let (image, program) = makeProgram(bodySize: 9000)
        let board = boardHolding(image, program, mode: .pairing, flashIncomplete: true)
        var driver = LoopbackDriver(
            flow: ProgramCheck(
                image: image, program: program, family: .nrf52833, start: .connected,
                knownComplete: true), board: board)
        let finished = driver.run()
        #expect(finished)
        guard case let .verified(_, rewrites)? = try driver.flow.outcome?.get() else {
            Issue.record("expected verified, got \(String(describing: driver.flow.outcome))"); return
        }
        let plan = try BlockPlan(
            image: image, program: program,
            boardRegion: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: newProgramHash),
            family: .nrf52833, skipErasedBlocks: true, sealProgramHash: true)
        #expect(rewrites?.pageRewrites == 1 && rewrites?.blocks == plan.cheapestPage.count)
        #expect(driver.board.mode == .application && !driver.board.flashIncomplete)
        #expect(boardHolds(driver.board, image: image, program: program, pageSize: 4096))
        #expect(driver.board.violations.isEmpty, "END_OF_TRANSMISSION only after an acknowledged block")
        // EE 00 02 00 01 (pairing mode: region 1 too), the page, 02, then EE 00 02 (application mode).
        #expect(driver.written.prefix(3) == [[0xEE], [0x00, 0x02], [0x00, 0x01]])
        let eot = try #require(driver.written.firstIndex(of: [0x02]))
        #expect(driver.written[eot - 1].first == 0x01, "END_OF_TRANSMISSION directly after the page's last block")
        #expect(driver.written.suffix(2) == [[0xEE], [0x00, 0x02]])
    }

    @Test func rewritesAPageOfABoardThatStillReportsTheHashFromBeforeTheWrite() throws {
        // END_OF_TRANSMISSION lost with the link: the board did not restart, its memory map is
        // the one it read at its last boot.
        let (image, program) = makeProgram(bodySize: 9000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true,
            acceptedHashes: [oldProgramHash])
        _ = check.begin(now: .zero)
        let read = check.run([.connected(link), status(.pairing), v2Program, v2Runtime])
        #expect(packetNumbers(read) == [0, 1, 2, 3], "the page's opener goes out after the REGION_INFO barrier")
        var strict = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true)
        _ = strict.begin(now: .zero)
        _ = strict.run([.connected(link), status(.pairing), v2Program, v2Runtime])
        #expect(
            strict.partialFlashError
                == .verificationFailed(
                    expectedStart: 0x47000, expectedHash: newProgramHash,
                    reported: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash)))
    }

    @Test func reportsUnverifiedWithTheReasonWhenTheBoardIsNotBackWithinTheWindow() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true)
        _ = check.begin(now: .zero)
        let refused = TransportError.connectFailed("le-connection-abort-by-local")
        #expect(
            effects(check.handle(.connectFailed(refused), now: .seconds(1))) == [
                .connect(after: .seconds(1), to: .application)
            ])
        let over = check.handle(.timerFired(window), now: .seconds(10))
        #expect(over.last == .finish)
        guard case let .unverified(why, nil)? = try check.outcome?.get() else {
            Issue.record("expected unverified, got \(String(describing: check.outcome))"); return
        }
        #expect(
            why.contains("within 10 s") && why.contains("Bluetooth off") && why.contains("le-connection-abort-by-local")
        )
    }

    @Test func stopsTryingWhenTheAttemptsAreSpentBeforeTheWindowEnds() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833,
            settings: PartialFlashSettings(reconnectAttempts: 2), start: .restarted, knownComplete: true)
        _ = check.begin(now: .zero)
        let refused = TransportError.connectFailed("refused")
        _ = check.handle(.connectFailed(refused), now: .seconds(1))
        let end = check.handle(.connectFailed(refused), now: .seconds(2))
        #expect(effects(end) == [.cancelTimer(window), .finish])
        #expect(
            check.outcome.map { (try? $0.get())?.verification }
                == .some(
                    .unverified(
                        "the board did not accept a connection within 10 s of its restart (last attempt: \(refused)): it does not "
                            + "advertise, which a board in pairing mode does, so most likely its program keeps Bluetooth off in "
                            + "application mode (MakeCode programs without the Bluetooth extension), or it is out of range"
                    )))
    }

    @Test func restartsAnUpToDateBoardAndReportsFlashIncompleteWhenItComesBackInPairingMode() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        let board = boardHolding(image, program, mode: .pairing, flashIncomplete: true)
        var driver = LoopbackDriver(
            flow: ProgramCheck(
                image: image, program: program, family: .nrf52833, start: .restart,
                knownComplete: false), board: board)
        let finished = driver.run()
        #expect(finished)
        guard case let .flashIncomplete(map)? = try driver.flow.outcome?.get() else {
            Issue.record("expected flashIncomplete, got \(String(describing: driver.flow.outcome))"); return
        }
        #expect(map.mode == .pairing && map.program.hash == newProgramHash)
        #expect(driver.written.first == [0xFF, 0x01] && !driver.written.contains { $0.first == 0x01 })
    }

    @Test func failsWhenTheBoardRunsAnotherProgram() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true)
        _ = check.begin(now: .zero)
        _ = check.run([.connected(link), status(.application), v2Program])
        let expected = PartialFlashError.verificationFailed(
            expectedStart: 0x47000, expectedHash: newProgramHash,
            reported: RegionInfo(id: 2, start: 0x47000, end: 0x73000, hash: oldProgramHash))
        #expect(check.partialFlashError == expected)
        #expect(expected.description.contains("C1008100AB00DD00") && expected.description.contains("1E0053001200A200"))
    }

    @Test func givesUpWhenPageRewritesDoNotLeavePairingMode() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833,
            settings: PartialFlashSettings(pageRewriteLimit: 0), start: .restarted, knownComplete: true)
        _ = check.begin(now: .zero)
        _ = check.run([.connected(link), status(.pairing), newProgramRegion(), v2Runtime])
        #expect(check.partialFlashError == .staysInPairingMode(rewrites: 0))
        #expect(check.partialFlashError?.description.contains("flashIncomplete") == true)
    }

    @Test func reportsUnverifiedWhenTheRestartedBoardOffersNoPartialFlashing() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var check = ProgramCheck(
            image: image, program: program, family: .nrf52833, start: .restarted, knownComplete: true)
        _ = check.begin(now: .zero)
        _ = check.handle(.connected(ConnectionInfo(services: [NordicGATT.secureService], mtu: 23)), now: .seconds(1))
        guard case let .unverified(why, _)? = try check.outcome?.get() else {
            Issue.record("expected unverified, got \(String(describing: check.outcome))"); return
        }
        #expect(why.contains("no partial-flashing service"))
    }
}
