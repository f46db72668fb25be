import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

@Suite struct WriterTests {
    let block = PartialFlashTimer.block
    let answer = PartialFlashTimer.answer
    let reboot = PartialFlashTimer.reboot
    let fenceRequest: [UInt8] = [0xFF, 0x00]
    /// The recovery through the fence (`FF 00`, the restart, a fresh connection), which follows
    /// the fill-ins (`FillInTests`), at the first block timeout.
    static var fenceOnly: PartialFlashSettings {
        var settings = PartialFlashSettings()
        settings.fillIns = 0
        return settings
    }

    func startedWriter(bodySize: Int = 4000, settings: PartialFlashSettings = PartialFlashSettings())
        throws -> (PartialFlashWriter, [FlowAction])
    {
        let (plan, program) = try makePlan(bodySize: bodySize)
        var writer = PartialFlashWriter(plan: plan, program: program, settings: settings)
        let actions = writer.beginAfterRegionInfo()
        return (writer, actions)
    }

    @Test func sendsFirstBlockAsFourPacketsWithAddressSplitAcrossPacketsZeroAndOne() throws {
        let (writer, actions) = try startedWriter()
        let body = Array(writer.plan.blocks[0].data[32..<64])
        #expect(
            writes(actions) == [
                [0x01, 0x70, 0x00, 0x00] + MakeCodeProgram.magic,
                [0x01, 0x00, 0x04, 0x01] + runtimeHash + newProgramHash,
                [0x01, 0x00, 0x00, 0x02] + body[0..<16],
                [0x01, 0x00, 0x00, 0x03] + body[16..<32]
            ])
        #expect(
            effects(actions).first == .startTimer(PartialFlashTimer.deadline, .seconds(30) + .milliseconds(250) * 63))
        #expect(effects(actions).last == .startTimer(block, .seconds(1)))
        #expect(reports(actions).first == .phase(.partial))
        #expect(partialReports(actions).contains(.sent([0x01, 0x70, 0x00, 0x00] + MakeCodeProgram.magic)))
        #expect(writerReports(actions).contains(.sendingBlock(block: 0, of: 63, address: 0x47000, firstPacket: 0)))
    }

    @Test func continuesNumberingAfterEachAckAndReportsProgress() throws {
        var (writer, _) = try startedWriter()
        let second = writer.handle(ack, now: .milliseconds(60))
        #expect(packetNumbers(second) == [4, 5, 6, 7])
        #expect(writes(second).first?.prefix(3) == [0x01, 0x70, 0x40])
        #expect(writes(second)[1].prefix(3) == [0x01, 0x00, 0x04])
        #expect(effects(second).first == .cancelTimer(block))
        #expect(reports(second).contains(.progress(done: 1, total: 63, unit: .blocks)))
        #expect(packetNumbers(writer.handle(ack, now: .milliseconds(120))) == [8, 9, 10, 11])
    }

    @Test func sendsEndOfTransmissionOnlyAfterTheLastAckThenFinishesWhenTheBoardRestarts() throws {
        var (writer, first) = try startedWriter(bodySize: 96, settings: Self.fenceOnly)  // 2 blocks
        #expect(writer.plan.blockCount == 2)
        #expect(!writes(first).contains([0x02]))
        let second = writer.handle(ack, now: .milliseconds(60))
        #expect(!writes(second).contains([0x02]))
        // A timeout on the last block recovers through the fence; it does not end the
        // transmission. The write goes on from the block that opens its page.
        #expect(writes(writer.run([.timerFired(block)], at: .seconds(2))) == [fenceRequest])
        // On the next connection the check (its last write is STATUS); the restarted board's
        // `01 AA` shows the restart, and the barrier follows.
        #expect(
            writes(writer.run([.disconnected(.remoteTerminated), .connected(link)], at: .seconds(2))).last == [0xEE])
        #expect(writes(writer.handle(outOfOrder, now: .seconds(2))) == [[0x00, 0x02]])
        // After the barrier of a reconnection, the step: packet 128, out of order, answered 01 AA.
        #expect(writes(writer.handle(v2Program, now: .seconds(2))) == [stepPacket(expecting: 0)])
        let opener = writer.handle(outOfOrder, now: .seconds(2))
        #expect(packetNumbers(opener) == [4, 5, 6, 7] && writes(opener).first?.prefix(3) == [0x01, 0x70, 0x00])
        #expect(packetNumbers(writer.handle(ack, now: .seconds(2))) == [8, 9, 10, 11])
        let end = writer.handle(ack, now: .seconds(2))
        #expect(
            effects(end) == [
                .cancelTimer(block), .write(pf, [0x02], .command),
                .startTimer(PartialFlashTimer.reboot, .seconds(10))
            ])
        #expect(reports(end).contains(.progress(done: 2, total: 2, unit: .blocks)))
        // Reading the board back is `ProgramCheck`'s: the writer ends with the restart.
        #expect(
            effects(writer.handle(.disconnected(.remoteTerminated), now: .seconds(3)))
                == [.cancelTimer(PartialFlashTimer.reboot), .cancelTimer(PartialFlashTimer.deadline), .finish])
        #expect(
            try writer.outcome?.get()
                == PartialFlashStats(
                    blocks: 2, bytes: 128, pages: 1, retries: 1,
                    resyncs: 1, verified: false))
    }

    @Test func resendsBlockNumberedFromStartPlusFourAfterOutOfOrder() throws {
        var (writer, _) = try startedWriter()
        _ = writer.handle(ack, now: .zero)  // block 2 goes out as 4-7
        let resend = writer.handle(outOfOrder, now: .zero)
        #expect(packetNumbers(resend) == [8, 9, 10, 11])
        #expect(writes(resend).first?.prefix(3) == [0x01, 0x70, 0x40], "the same block again")
        #expect(writerReports(resend).contains(.outOfOrder(block: 1, address: 0x47040, firstPacket: 8)))
        #expect(packetNumbers(writer.handle(ack, now: .zero)) == [12, 13, 14, 15])
        #expect(writer.stats.retries == 1 && writer.stats.resyncs == 0)
    }

    @Test func recoversAsAfterATimeoutWhenTheSameBlockIsOutOfOrderTwice() throws {
        var (writer, _) = try startedWriter()
        _ = writer.handle(outOfOrder, now: .zero)  // resent as 4-7
        let second = writer.handle(outOfOrder, now: .zero)  // a second AA for the same block
        // The resend (4-7) may still be in the board's hands: the fence, then a fresh connection.
        #expect(
            effects(second) == [
                .cancelTimer(block), .write(pf, fenceRequest, .command), .startTimer(reboot, .seconds(10))
            ])
        _ = writer.run([.disconnected(.remoteTerminated), .connected(link), outOfOrder])
        _ = writer.handle(region(2, 0x47000, 0x73000, oldProgramHash), now: .zero)
        let again = writer.handle(outOfOrder, now: .zero)  // the step's answer
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        #expect(writes(again).first?.prefix(3) == [0x01, 0x70, 0x00])
        #expect(packetNumbers(writer.handle(ack, now: .zero)) == [8, 9, 10, 11])
        #expect(writer.stats.resyncs == 1 && writer.stats.retries == 2)
    }

    @Test func recoversFromABlockTimeoutWithTheFenceThenSendsTheBlockAgainOnAFreshConnection() throws {
        // Block 3 (8-11) gets no answer: its 4th packet, the block or its answer was lost.
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.run([ack, ack])
        let fence = writer.handle(.timerFired(block), now: .seconds(1))
        #expect(effects(fence) == [.write(pf, fenceRequest, .command), .startTimer(reboot, .seconds(10))])
        #expect(
            writerReports(fence).contains {
                if case .fencing(block: 2, address: 0x47080, _) = $0 { true } else { false }
            })
        // The board restarts once its pending flash events ran: a fresh connection, not counted
        // as a link loss.
        let restart = writer.handle(.disconnected(.supervisionTimeout), now: .milliseconds(1200))
        #expect(effects(restart) == [.cancelTimer(reboot), .connect(after: .zero)])
        // Whether that loss was the restart: packet 7, one before block 3's first, then STATUS.
        let back = writer.handle(.connected(link), now: .milliseconds(1900))
        let probe = [0x01, 0x00, 0x00, 0x07] + Array(writer.plan.blocks[2].data[48..<64])
        #expect(
            effects(back) == [
                .subscribe(pf), .write(pf, probe, .command), .write(pf, [0xEE], .command),
                .startTimer(answer, .seconds(2))
            ])
        // A restarted board expects packet 0: `01 AA`. The barrier follows.
        #expect(
            effects(writer.handle(outOfOrder, now: .milliseconds(1915)))
                == [.cancelTimer(answer), .write(pf, [0x00, 0x02], .command), .startTimer(answer, .seconds(2))])
        // The board restarted only after block 3's flash event, if any, ended: the block was
        // burnt whole or not at all, and a second write of its words is within nWRITE.
        // First the step that keeps the block away from packet 0: it is answered 01 AA.
        #expect(writes(writer.handle(v2Program, now: .milliseconds(1930))) == [stepPacket(expecting: 0)])
        let again = writer.handle(outOfOrder, now: .milliseconds(1940))
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        #expect(writes(again).first?.prefix(3) == [0x01, 0x70, 0x80], "block 3 again, at 0x47080")
        #expect(packetNumbers(writer.handle(ack, now: .milliseconds(1960))) == [8, 9, 10, 11])
        #expect(writer.stats.retries == 1 && writer.stats.resyncs == 1 && writer.stats.reconnects == 0)
    }

    @Test func aSecondRecoveryOfTheSameBlockGoesOnFromTheBlockThatOpensItsPage() throws {
        // Block 3 may be burnt twice already: a third write of its words would pass nWRITE, so
        // the write goes on from block 1, whose page the board then erases.
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.run([ack, ack])
        let recovery: [FlowEvent] = [.timerFired(block), .disconnected(.remoteTerminated), .connected(link)]
        // Block 3 went as packets 8-11: the check's `01 AA` shows the restart.
        _ = writer.run(recovery + [outOfOrder, v2Program])
        #expect(
            writes(writer.handle(outOfOrder, now: .seconds(2))).first?.prefix(3) == [0x01, 0x70, 0x80], "block 3 again")
        // Now as packets 4-7 (after the step): the check sends packet 3, and 01 AA shows the restart.
        #expect(writes(writer.run(recovery + [outOfOrder])).last == [0x00, 0x02])
        let second = writer.run([v2Program, outOfOrder], at: .seconds(4))
        #expect(writes(second).first == stepPacket(expecting: 0))
        #expect(writes(second)[1].prefix(3) == [0x01, 0x70, 0x00], "from block 1, at 0x47000")
        #expect(
            writerReports(second).contains {
                if case .rewinding(block: 0, address: 0x47000, _, _, _) = $0 { true } else { false }
            })
        #expect(writer.stats.resyncs == 2 && writer.stats.reconnects == 0)
    }

    @Test func aLateAnswerBeforeTheRestartIsTheBlocksOwnAndChangesNothing() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.handle(.timerFired(block), now: .seconds(1))
        // Block 1's 01 FF, late: the board ran its flash event before FF 00's.
        let late = writer.handle(ack, now: .milliseconds(1010))
        #expect(effects(late).isEmpty)
        #expect(
            writerReports(late).contains {
                if case .lateAnswer(block: 0, _) = $0 { true } else { false }
            })
        // Block 1 went as packets 0-3: the check sends packet 249, which a restarted board drops
        // silently (7 behind 0) and one that has any of the block answers 01 AA; STATUS first.
        let check = writer.run([.disconnected(.remoteTerminated), .connected(link)], at: .milliseconds(1100))
        #expect(packetNumbers(check) == [249] && writes(check).last == [0xEE])
        #expect(writes(writer.handle(status(.pairing), now: .milliseconds(1150))) == [[0x00, 0x02]])
        // The block is sent again all the same (after the step), and the next answer is its answer.
        _ = writer.handle(v2Program, now: .milliseconds(1200))
        let again = writer.handle(outOfOrder, now: .milliseconds(1210))
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        #expect(writes(again).first?.prefix(3) == [0x01, 0x70, 0x00])
        #expect(reports(again).allSatisfy { if case .progress = $0 { false } else { true } })
        #expect(
            reports(writer.handle(ack, now: .milliseconds(1230))).contains(.progress(done: 1, total: 63, unit: .blocks))
        )
        #expect(writer.stats.retries == 1)
    }

    @Test func sendsTheFenceAgainOnceAndGivesUpOnABoardThatDoesNotRestart() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.handle(.timerFired(block), now: .seconds(1))
        #expect(writes(writer.handle(.timerFired(reboot), now: .seconds(11))) == [fenceRequest])
        // FF 00 waits behind a flash operation that never ends: the session resets the board (FF 01).
        #expect(
            effects(writer.handle(.timerFired(reboot), now: .seconds(21)))
                == [.cancelTimer(PartialFlashTimer.deadline), .finish])
        #expect(
            writer.partialFlashError
                == .rebootNotObserved(
                    after: "the fence (FF 00) after block 1; its flash work may hang", waited: .seconds(10)))
    }

    @Test func anAnswerIsTakenWhenEverItArrivesEvenAtTheInstantOfTheNextWrite() throws {
        // No answer is too early or too late to count: order alone says whose it is.
        var (writer, _) = try startedWriter()
        #expect(packetNumbers(writer.handle(ack, now: .microseconds(500))) == [4, 5, 6, 7])
        #expect(packetNumbers(writer.handle(ack, now: .microseconds(500))) == [8, 9, 10, 11])
        #expect(packetNumbers(writer.handle(ack, now: .milliseconds(900))) == [12, 13, 14, 15])
        #expect(writer.stats.retries == 0)
    }

    @Test func answersTheRegionInfoBarrierWithTheStepThenTheSameBlock() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        // Block 2 unanswered; after the fence, waiting for REGION_INFO 2 on the fresh connection.
        _ = writer.run([ack, .timerFired(block), .disconnected(.remoteTerminated), .connected(link), outOfOrder])
        // A status or a region answer for another region changes nothing.
        #expect(effects(writer.run([status(.pairing), v2Runtime])).isEmpty)
        #expect(writes(writer.handle(v2Program, now: .seconds(2))) == [stepPacket(expecting: 0)])
        #expect(effects(writer.run([status(.pairing), v2Runtime])).isEmpty)
        let again = writer.handle(outOfOrder, now: .seconds(2))
        #expect(packetNumbers(again) == [4, 5, 6, 7])
        #expect(writes(again).first?.prefix(3) == [0x01, 0x70, 0x40], "block 2 again")
        #expect(reports(again).allSatisfy { if case .progress = $0 { false } else { true } })
    }

    @Test func treatsASecondAnswerForTheSameTransmissionAsADuplicate() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.run([.timerFired(block), ack])  // block 1's late answer
        // A transmission yields one answer at most: this one is extra, an earlier answer was
        // duplicated and a block may have been skipped. The write stops for a full flash.
        let extra = writer.handle(ack, now: .seconds(2))
        #expect(effects(extra) == [.cancelTimer(reboot), .cancelTimer(PartialFlashTimer.deadline), .finish])
        #expect(writer.partialFlashError == .unaccountedAnswers(count: 1))
    }

    @Test func treatsAWriteAnswerAfterTheFencesRestartAsADuplicate() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        _ = writer.run([ack, .timerFired(block), .disconnected(.remoteTerminated), .connected(link), outOfOrder])
        // Nothing made before the restart can answer on the new connection.
        let extra = writer.handle(ack, now: .seconds(2))
        #expect(effects(extra) == [.cancelTimer(answer), .cancelTimer(PartialFlashTimer.deadline), .finish])
        #expect(writer.partialFlashError == .unaccountedAnswers(count: 1))
    }

    @Test func givesUpAfterTheBlockRetryLimitNamingTheBlock() throws {
        var (writer, _) = try startedWriter(
            settings: {
                var settings = PartialFlashSettings(blockRetryLimit: 2)
                settings.fillIns = 0
                return settings
            }())
        // Block 2: two retries (an out of order, a timeout and its recovery through the fence).
        _ = writer.run([
            ack, outOfOrder, .timerFired(block), .disconnected(.remoteTerminated), .connected(link), outOfOrder,
            v2Program, outOfOrder
        ])
        #expect(writer.outcome == nil)
        let last = writer.handle(.timerFired(block), now: .seconds(3))
        #expect(effects(last) == [.cancelTimer(PartialFlashTimer.deadline), .finish])
        let error = writer.partialFlashError
        #expect(
            error
                == .gaveUp(
                    block: 1, address: 0x47040, retries: 3, budget: .block(limit: 2),
                    lastProblem: .noAcknowledgement(.seconds(1))))
        #expect(error?.description.contains("block 1 (address 0x00047040) after 3 retries") == true)
        #expect(error?.description.contains("no acknowledgement within 1 s") == true)
    }

    @Test func givesUpWhenTheRunRetryBudgetIsSpent() throws {
        var (writer, _) = try startedWriter(settings: PartialFlashSettings(runRetryLimit: 3))
        _ = writer.run([outOfOrder, ack, outOfOrder, ack, outOfOrder, ack])
        #expect(writer.outcome == nil)
        _ = writer.handle(outOfOrder, now: .zero)
        #expect(
            writer.partialFlashError
                == .gaveUp(
                    block: 3, address: 0x470C0, retries: 1, budget: .run(limit: 3),
                    lastProblem: .outOfOrder))
    }

    @Test func givesUpAtTheRunDeadline() throws {
        var (writer, _) = try startedWriter()
        _ = writer.run([ack, ack])
        _ = writer.handle(.timerFired(PartialFlashTimer.deadline), now: .seconds(46))
        guard case let .gaveUp(index, address, _, budget, _)? = writer.partialFlashError else {
            Issue.record("expected gaveUp, got \(String(describing: writer.outcome))"); return
        }
        #expect(index == 2 && address == 0x47080)
        #expect(budget == .deadline(.seconds(30) + .milliseconds(250) * 63))
    }

    @Test func refusesToStartWithoutBlocksAndNeverSendsEndOfTransmission() {
        var writer = PartialFlashWriter(plan: BlockPlan(blocks: [], pageSize: 4096))
        let actions = writer.beginAfterRegionInfo()
        #expect(actions == [.finish])
        #expect(writer.partialFlashError == .nothingToWrite)
    }

    @Test func resendsEndOfTransmissionOnceWhenTheBoardDoesNotRestart() throws {
        var (writer, _) = try startedWriter(bodySize: 32)
        _ = writer.handle(ack, now: .zero)
        #expect(writes(writer.handle(.timerFired(PartialFlashTimer.reboot), now: .seconds(10))) == [[0x02]])
        #expect(
            effects(writer.handle(.timerFired(PartialFlashTimer.reboot), now: .seconds(20)))
                == [.cancelTimer(PartialFlashTimer.deadline), .finish])
        #expect(writer.partialFlashError == .rebootNotObserved(after: "END_OF_TRANSMISSION (02)", waited: .seconds(10)))
    }

    @Test func reconnectsAfterLinkLossAndResumesAtTheFirstBlockOfThePage() throws {
        var (writer, _) = try startedWriter(bodySize: 9000)  // 142 blocks over 3 pages
        _ = writer.run(blockAnswers(70))  // blocks 1-70 written, block 71 in flight
        let lost = writer.handle(.disconnected(.supervisionTimeout), now: .seconds(5))
        #expect(effects(lost) == [.cancelTimer(block), .connect(after: .seconds(1))])
        #expect(
            effects(writer.handle(.connectFailed(.connectFailed("In Progress")), now: .seconds(6)))
                == [.connect(after: .seconds(1))])
        // Block 71 may still be pending on a board that did not restart: the fence first.
        let back = writer.handle(.connected(link), now: .seconds(7))
        #expect(
            effects(back) == [.subscribe(pf), .write(pf, fenceRequest, .command), .startTimer(reboot, .seconds(10))])
        // Block 71 went as packets 28-31 (blocks 64 on from packet 0, after the step past 252):
        // the check sends packet 27, then STATUS.
        let probe = [0x01, 0x00, 0x00, 27] + Array(writer.plan.blocks[64].data[48..<64])
        #expect(
            effects(writer.run([.disconnected(.remoteTerminated), .connected(link)], at: .seconds(7)))
                == [
                    .cancelTimer(reboot), .connect(after: .zero), .subscribe(pf), .write(pf, probe, .command),
                    .write(pf, [0xEE], .command), .startTimer(answer, .seconds(2))
                ])
        #expect(writes(writer.handle(outOfOrder, now: .seconds(7))) == [[0x00, 0x02]])
        _ = writer.handle(region(2, 0x47000, 0x73000, oldProgramHash), now: .seconds(7))
        let resumed = writer.handle(outOfOrder, now: .seconds(7))  // the step's answer
        #expect(packetNumbers(resumed) == [4, 5, 6, 7])
        #expect(writes(resumed).first?.prefix(3) == [0x01, 0x80, 0x00], "block 65 opens page 0x48000")
        #expect(writes(resumed)[1].prefix(3) == [0x01, 0x00, 0x04])
        // Progress does not go backwards while the page is rewritten.
        #expect(reports(writer.handle(ack, now: .seconds(8))).contains(.progress(done: 70, total: 142, unit: .blocks)))
        #expect(writer.stats.reconnects == 1 && writer.stats.resyncs == 1)
    }

    @Test func aLossAfterFF00ThatWasNotTheRestartCountsAsADropAndTheBoardIsFencedAgain() throws {
        var (writer, _) = try startedWriter(settings: Self.fenceOnly)
        // Block 2 (4-7) unanswered: FF 00; the link drops, and the next connection is made at once.
        _ = writer.run([ack, .timerFired(block)])
        #expect(
            effects(writer.handle(.disconnected(.supervisionTimeout), now: .seconds(2))).last == .connect(after: .zero))
        _ = writer.handle(.connected(link), now: .seconds(3))
        // STATUS answers with no `01 AA` before it: the board still expected block 2, so it never
        // restarted (FF 00 was lost with the drop, or is still queued). The loss counts.
        let notRestarted = writer.handle(status(.pairing), now: .seconds(3))
        #expect(
            effects(notRestarted) == [
                .cancelTimer(answer), .write(pf, fenceRequest, .command), .startTimer(reboot, .seconds(10))
            ])
        #expect(
            writerReports(notRestarted).contains {
                if case .droppedBeforeRestart = $0 { true } else { false }
            })
        #expect(writer.stats.reconnects == 1 && writer.stats.retries == 2)
        // This time the board restarts: free.
        _ = writer.run([.disconnected(.supervisionTimeout), .connected(link)])
        #expect(writes(writer.handle(outOfOrder, now: .seconds(4))) == [[0x00, 0x02]])
        #expect(writer.stats.reconnects == 1)
    }

    @Test func aLateAnswerOnTheNextConnectionShowsTheBoardDidNotRestart() throws {
        var (writer, _) = try startedWriter(settings: PartialFlashSettings(reconnectLimit: 0))
        // Block 2's answer (4-7) is late: after both fill-ins, FF 00; the link drops before the restart.
        _ = writer.run([ack, .timerFired(block), .timerFired(block), .timerFired(block)])
        _ = writer.run([.disconnected(.supervisionTimeout), .connected(link)])
        // Its `01 FF` on the new connection: no restart came, and no drop is allowed here.
        _ = writer.handle(ack, now: .seconds(5))
        guard case let .tooManyLinkLosses(count, _)? = writer.partialFlashError else {
            Issue.record("\(String(describing: writer.outcome))")
            return
        }
        #expect(count == 1)
    }

    @Test func stopsAfterTooManyLinkLosses() throws {
        var (writer, _) = try startedWriter(settings: PartialFlashSettings(reconnectLimit: 1))
        // The first loss, the fence on the new connection and its restart, the write again.
        _ = writer.run([
            .disconnected(.supervisionTimeout), .connected(link), .disconnected(.remoteTerminated), .connected(link),
            region(2, 0x47000, 0x73000, oldProgramHash)
        ])
        _ = writer.handle(.disconnected(.remoteTerminated), now: .seconds(9))
        #expect(writer.partialFlashError == .tooManyLinkLosses(count: 2, last: .remoteTerminated))
    }

    @Test func neverNumbersABlockFrom252ButStepsTheBoardOnToPacket0() throws {
        var (writer, _) = try startedWriter(bodySize: 9000)
        let upTo62 = writer.run(Array(repeating: ack, count: 62))
        #expect(packetNumbers(upTo62).suffix(4) == [248, 249, 250, 251])
        // The next block would go as 252-255: a board that did not restart would then be at 0
        // with it whole, as a restart leaves it (`PartialFlashWriter.step(_:)`). A step.
        #expect(writes(writer.handle(ack, now: .zero)) == [stepPacket(expecting: 252)])
        let stepped = writer.handle(outOfOrder, now: .zero)
        #expect(packetNumbers(stepped) == [0, 1, 2, 3])
        #expect(writes(stepped).first?.prefix(3) == [0x01, 0x7F, 0xC0], "block 64, at 0x47FC0")
        #expect(packetNumbers(writer.handle(ack, now: .zero)) == [4, 5, 6, 7])
        #expect(writer.stats.retries == 0 && writer.stats.resyncs == 0)
        // Out of order at 248-251: the board then expects 252, so the same step.
        var (other, _) = try startedWriter(bodySize: 9000)
        _ = other.run(Array(repeating: ack, count: 62))
        let resend = other.handle(outOfOrder, now: .zero)
        #expect(writes(resend) == [stepPacket(expecting: 252)])
        #expect(writerReports(resend).contains(.outOfOrder(block: 62, address: 0x47F80, firstPacket: 0)))
        #expect(packetNumbers(other.handle(outOfOrder, now: .zero)) == [0, 1, 2, 3])
    }

    @Test func aStepAnsweredWithAWriteSuccessIsAnAnswerTooMany() throws {
        var (writer, _) = try startedWriter(bodySize: 9000)
        _ = writer.run(Array(repeating: ack, count: 63))
        // Nothing is pending when a step goes out: a 01 FF now was taken for a later block's.
        _ = writer.handle(ack, now: .zero)
        #expect(writer.partialFlashError == .unaccountedAnswers(count: 1))
    }

    @Test func failsClearlyOnMalformedNotificationWhileWriting() throws {
        var (writer, _) = try startedWriter()
        _ = writer.handle(notify([0x01, 0x12]), now: .zero)
        #expect(
            writer.partialFlashError
                == .malformedNotification(
                    bytes: [0x01, 0x12],
                    problem: .badValue("write status 0x12")))
    }

    @Test func subscribesAndResynchronisesBeforeWritingOnAFreshConnection() throws {
        let (plan, program) = try makePlan()
        var writer = PartialFlashWriter(plan: plan, program: program)
        let start = writer.handle(.start(link), now: .zero)
        #expect(
            effects(start).dropFirst() == [
                .subscribe(pf), .write(pf, [0x00, 0x02], .command),
                .startTimer(answer, .seconds(2))
            ])
        #expect(packetNumbers(writer.handle(v2Program, now: .zero)) == [0, 1, 2, 3])
    }

    @Test func toleratesStrayStatusAfterEndOfTransmission() throws {
        var (writer, _) = try startedWriter(bodySize: 32)
        _ = writer.handle(ack, now: .zero)
        #expect(effects(writer.run([status(.pairing), region(1, 0x1C000, 0x46B00, runtimeHash)])).isEmpty)
        _ = writer.run([.disconnected(.remoteTerminated)])
        #expect(try writer.outcome?.get().blocks == 1)
    }

    @Test func flagsAWriteAnswerAfterEndOfTransmissionAsAPossiblySkippedBlock() throws {
        var (writer, _) = try startedWriter(bodySize: 96)  // 2 blocks
        // Block 1's 01 FF arrives twice; the copy is taken for block 2's answer.
        let end = writer.run([ack, ack])
        #expect(writes(end).last == [0x02])
        // Block 2's real answer then arrives after END_OF_TRANSMISSION.
        #expect(effects(writer.handle(ack, now: .milliseconds(30))).isEmpty)
        _ = writer.run([.disconnected(.remoteTerminated)])
        #expect(writer.partialFlashError == .unaccountedAnswers(count: 1))
        #expect(writer.partialFlashError?.description.contains("full flash") == true)
    }

    @Test func rewritesOnlyTheCheapestPageAndEndsDirectlyAfterItsLastBlock() throws {
        let (plan, _) = try makePlan(bodySize: 9000, seal: true)  // 3 pages and the hash block
        let page = plan.cheapestPage
        #expect(page.lowerBound > 0 && plan.blocks[page.lowerBound].opensPage, "never the page with the hash")
        var writer = PartialFlashWriter(rewritingPageOf: plan)
        let first = writer.beginAfterRegionInfo()
        #expect(firstBlockAddress(in: first) == plan.blocks[page.lowerBound].address)
        #expect(
            writerReports(first).contains(
                .rewritingOnePage(address: plan.blocks[page.lowerBound].address, blocks: page.count)))
        let acks = writer.run(blockAnswers(page.count))
        // END_OF_TRANSMISSION follows the page's last acknowledged block, no REGION_INFO between.
        #expect(writes(acks).suffix(2).first?.first == 0x01 && writes(acks).last == [0x02])
        #expect(!writes(acks).contains([0x00, 0x02]))
        _ = writer.handle(.disconnected(.remoteTerminated), now: .seconds(9))
        #expect(try writer.outcome?.get().blocks == page.count)
    }

    @Test func namesAFailedWriteAsTheLastProblemWhenGivingUp() throws {
        var (writer, _) = try startedWriter(
            settings: {
                var settings = PartialFlashSettings(blockRetryLimit: 0)
                settings.fillIns = 0
                return settings
            }())
        let failure = TransportError.failed(operation: "WriteValue", message: "Not connected")
        let traced = writer.handle(.writeFailed(pf, failure), now: .zero)
        #expect(effects(traced).isEmpty)
        _ = writer.handle(.timerFired(block), now: .seconds(1))
        #expect(
            writer.partialFlashError
                == .gaveUp(
                    block: 0, address: 0x47000, retries: 1, budget: .block(limit: 0),
                    lastProblem: .writeFailed(failure)))
        #expect(
            writer.partialFlashError?.description.contains("a write failed: WriteValue failed: Not connected") == true)
    }
}
