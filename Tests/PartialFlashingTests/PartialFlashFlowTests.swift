import FirmwareImage
import Testing
import Transport
@testable import PartialFlashing

@Suite struct PartialFlashFlowTests {
    @Test func flashesProgramAndVerifiesItOnAModelBoard() throws {
        let (image, program) = makeProgram(bodySize: 9000)
        var driver = LoopbackDriver(
            flow: PartialFlashFlow(image: image, program: program, family: .nrf52833),
            board: boardWithOldProgram(family: .nrf52833, at: 0x47000))
        let finished = driver.run()
        #expect(finished)
        // 142 blocks, and the program hash written last by a 143rd.
        #expect(
            try driver.flow.outcome?.get()
                == .flashed(
                    stats: PartialFlashStats(
                        blocks: 143, bytes: 143 * 64, pages: 3, verified: true)))
        let holds = boardHolds(driver.board, image: image, program: program, pageSize: 4096)
        #expect(holds)
        let violations = driver.board.violations
        #expect(violations.isEmpty)
        #expect(driver.flow.decision == .partial)
        // EE, 00 01, 00 02, 142 × 4 packets, the 00 02 barrier, the hash block, 02, then EE and 00 02 to read
        // back; twice, where the next block would go as packets 252-255, a step on to 0 instead.
        #expect(driver.written.count == 3 + 143 * 4 + 2 + 1 + 1 + 2)
        #expect(driver.written.prefix(3) == [[0xEE], [0x00, 0x01], [0x00, 0x02]])
        #expect(driver.written.suffix(3) == [[0x02], [0xEE], [0x00, 0x02]])
        #expect(driver.board.mode == .application && !driver.board.flashIncomplete)
    }

    @Test func leavesAnUpToDateBoardThatThisComputerFinishedUntouched() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        let record = FinishRecord(board: "b", programHash: program.programHash.hexString, finishedAt: "then")
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833, finished: record)
        let actions = flow.run([
            .start(link), status(.application), v2Runtime, region(2, 0x47000, 0x73000, newProgramHash)
        ])
        #expect(writes(actions) == [[0xEE], [0x00, 0x01], [0x00, 0x02]], "no FF 00, no FF 01, no block")
        #expect(try flow.outcome?.get() == .upToDate(.verified))
        #expect(flow.confirmation == .finishedHere(at: "then"))
        #expect(actions.last == .finish)
    }

    /// Without a record of this computer, the same board may hold another client's unfinished
    /// flash of the program (its hash is written first): it is restarted into its program.
    @Test func restartsAnUpToDateBoardInApplicationModeThatNothingVouchesFor() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        let other = FinishRecord(board: "b", programHash: "0000000000000000", finishedAt: "then")
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833, finished: other)
        let actions = flow.run([
            .start(link), status(.application), v2Runtime, region(2, 0x47000, 0x73000, newProgramHash)
        ])
        #expect(writes(actions) == [[0xEE], [0x00, 0x01], [0x00, 0x02], [0xFF, 0x01]])
        #expect(flow.outcome == nil)
        _ = flow.handle(.disconnected(.remoteTerminated), now: .seconds(1))
        _ = flow.run([.connected(link), status(.application), region(2, 0x47000, 0x73000, newProgramHash)])
        #expect(try flow.outcome?.get() == .upToDate(.verified))
        guard case .restarted? = flow.confirmation else {
            Issue.record("confirmation: \(String(describing: flow.confirmation))")
            return
        }
    }

    @Test func restartsAnUpToDateBoardInPairingModeAndReadsItBackRunningItsProgram() throws {
        let (image, program) = makeProgram(bodySize: 2000)
        var board = ModelBoard(family: .nrf52833)
        board.load(image.read(program.region), at: 0x47000)
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833)
        let actions = flow.run([.start(link), status(.pairing), v2Runtime, region(2, 0x47000, 0x73000, newProgramHash)])
        #expect(writes(actions) == [[0xEE], [0x00, 0x01], [0x00, 0x02], [0xFF, 0x01]])
        #expect(flow.outcome == nil)
        #expect(actions.last == .startTimer(PartialFlashTimer.reboot, .seconds(10)))
        let restarted = flow.handle(.disconnected(.remoteTerminated), now: .seconds(1))
        #expect(
            effects(restarted) == [
                .cancelTimer(PartialFlashTimer.reboot),
                .startTimer(PartialFlashTimer.restartWindow, .seconds(10)), .connect(after: .zero, to: .application)
            ])
        _ = flow.run([.connected(link), status(.application), region(2, 0x47000, 0x73000, newProgramHash)])
        #expect(try flow.outcome?.get() == .upToDate(.verified))
        // The same against the model board.
        var driver = LoopbackDriver(
            flow: PartialFlashFlow(image: image, program: program, family: .nrf52833), board: board)
        let finished = driver.run()
        #expect(finished)
        #expect(try driver.flow.outcome?.get() == .upToDate(.verified))
        #expect(driver.board.mode == .application && !driver.written.contains { $0.first == 0x01 })
    }

    @Test func rewritesTheWholeProgramWhenAnUpToDateBoardComesBackInPairingMode() throws {
        // Another tool's flash stopped after the first page: the board reports the new hash, and
        // the rest of the program is the old one. It keeps starting in pairing mode.
        let (image, program) = makeProgram(bodySize: 9000)
        var board = boardWithOldProgram(family: .nrf52833, at: 0x47000)
        board.load(image.read(0x47000..<0x48000), at: 0x47000)
        board.flashIncomplete = true
        var driver = LoopbackDriver(
            flow: PartialFlashFlow(image: image, program: program, family: .nrf52833), board: board)
        let finished = driver.run()
        #expect(finished)
        guard case let .flashed(stats)? = try driver.flow.outcome?.get() else {
            Issue.record("expected the program written again, got \(String(describing: driver.flow.outcome))"); return
        }
        #expect(stats.verified && stats.blocks == 143 && driver.flow.rewroteIncompleteProgram)
        #expect(boardHolds(driver.board, image: image, program: program, pageSize: 4096))
        #expect(driver.board.mode == .application && !driver.board.flashIncomplete)
        #expect(driver.written.prefix(4) == [[0xEE], [0x00, 0x01], [0x00, 0x02], [0xFF, 0x01]])
    }

    @Test func requiresFullFlashForOtherRuntimeWithoutWritingAnyBlock() throws {
        let (image, program) = makeProgram()
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833)
        let other: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let actions = flow.run([.start(link), status(.pairing), region(1, 0x1C000, 0x46B00, other), v2Program])
        #expect(writes(actions) == [[0xEE], [0x00, 0x01], [0x00, 0x02]])
        #expect(try flow.outcome?.get() == .fullRequired(.runtimeDiffers(board: other, file: runtimeHash)))
        let why = FullFlashReason.runtimeDiffers(board: other, file: runtimeHash)
        #expect(partialReports(actions).contains(.fullRequired(why)))
        #expect(partialReports(actions).filter { $0.kind == .note }.isEmpty, "the decision says it once")
    }

    @Test func requiresFullFlashForFileWithoutProgramBeforeAskingTheBoard() throws {
        var flow = PartialFlashFlow(image: MemoryImage(), program: nil, family: .nrf51)
        let actions = flow.handle(.start(link), now: .zero)
        #expect(writes(actions).isEmpty)
        #expect(try flow.outcome?.get() == .fullRequired(.fileHasNoProgram))
    }

    @Test func requiresFullFlashForBoardWithoutProgram() throws {
        let (image, program) = makeProgram()
        var driver = LoopbackDriver(
            flow: PartialFlashFlow(image: image, program: program, family: .nrf52833),
            board: ModelBoard(family: .nrf52833))
        let finished = driver.run()
        #expect(finished)
        guard case let .fullRequired(reason)? = try driver.flow.outcome?.get() else {
            Issue.record("expected a full flash"); return
        }
        #expect(reason.code == "board-has-no-program")
        #expect(!driver.written.contains { $0.first == 0x01 })
    }

    @Test func switchesApplicationModeBoardThenFlashes() throws {
        let (image, program) = makeProgram(at: 0x35400, bodySize: 3000)
        var driver = LoopbackDriver(
            flow: PartialFlashFlow(image: image, program: program, family: .nrf51),
            board: boardWithOldProgram(family: .nrf51, at: 0x35400, mode: .application))
        let finished = driver.run()
        #expect(finished)
        guard case let .flashed(stats)? = try driver.flow.outcome?.get() else {
            Issue.record("expected flashed, got \(String(describing: driver.flow.outcome))"); return
        }
        #expect(stats.pages == 3 && stats.reconnects == 0 && stats.verified)
        // Decided on the map read in application mode; restarted into pairing mode only to write.
        #expect(
            driver.written.prefix(7) == [
                [0xEE], [0x00, 0x01], [0x00, 0x02], [0xFF, 0x00], [0xEE], [0x00, 0x01], [0x00, 0x02]
            ])
        let holds = boardHolds(driver.board, image: image, program: program, pageSize: 1024)
        #expect(holds)
    }

    @Test func reportsReaderErrorsAsTheFlowError() {
        let (image, program) = makeProgram()
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833)
        _ = flow.run([.start(link), status(.pairing), notify([0x00, 0x01, 0x00])])
        #expect(
            flow.partialFlashError
                == .malformedNotification(
                    bytes: [0x00, 0x01, 0x00], problem: .badLength(type: 0, expected: 18, got: 3)))
    }

    @Test func reportsPhasesInOrder() {
        let (image, program) = makeProgram(bodySize: 32)
        var flow = PartialFlashFlow(image: image, program: program, family: .nrf52833)
        // One block, the barrier, and the block that writes the program hash.
        let actions = flow.run([
            .start(link), status(.pairing), v2Runtime, v2Program, ack, v2Program, ack,
            .disconnected(.remoteTerminated), .connected(link), status(.application), v2Runtime,
            region(2, 0x47000, 0x73000, newProgramHash)
        ])
        let phases = reports(actions).compactMap { if case let .phase(p) = $0 { p } else { nil } }
        #expect(phases == [.readingMemoryMap, .partial, .reset, .verify, .done])
        #expect(actions.filter { $0 == .finish }.count == 1)
        #expect(actions.last == .finish)
    }
}
