import Testing
import SMP
import Transport
@testable import McuMgr
import PartialFlashingFrames

@Suite struct McuMgrLinkTests {
    private let image = Fixture.image(size: 80_000, seed: 6)

    @Test(arguments: [1, 3])
    func resumesAfterADisconnectResendingAtMostTheChunksInFlight(depth: Int) throws {
        var run = UpgradeRun(image: image, options: Fixture.options(depth: depth), device: Fixture.device(for: image))
        run.disconnectAfterUploadFrames = 12
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        let inFlight = try #require(run.unconfirmedAtDisconnect)
        #expect(result.resumes == 1)
        #expect(result.resentBytes <= inFlight)
        #expect(result.bytesSent == image.bytes.count + result.resentBytes)
        // The first chunk on the new connection repeats the session fields at a non-zero offset.
        let resumed = try #require(run.device.uploads.dropFirst(12).first)
        #expect(resumed.offset > 0 && resumed.length == image.bytes.count && resumed.sha == image.fileSHA256)
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func restartsFromTheStartWhenTheDeviceLostTheSession() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.disconnectAfterUploadFrames = 10
        run.resetAtDisconnect = true
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.resumes == 1)
        #expect(run.device.uploads.filter { $0.offset == 0 }.count == 2)
        #expect(result.resentBytes >= 9 * 2400)
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func ignoresAnswersThatArriveAfterTheLinkDropped() throws {
        // A late notification of the old link must not move the upgrade on: it would write to a
        // link that is not there and then wait for an answer that cannot come.
        var flow = McuMgrUpgrade(image: image, options: Fixture.options())
        var device = Fixture.device(for: image)
        let info = ConnectionInfo(services: [SMPGATT.service], mtu: 247)
        let first = flow.handle(.start(info), now: .zero)
        let request = try #require(
            first.compactMap { if case let .write(_, bytes, _) = $0 { bytes } else { nil } }.first)
        let answers = device.receive(write: request).answers
        #expect(!answers.isEmpty)
        _ = flow.handle(.disconnected(.supervisionTimeout), now: .milliseconds(10))
        for answer in answers {
            let late = flow.handle(.notification(SMPGATT.characteristic, answer), now: .milliseconds(20))
            #expect(!late.contains { if case .write = $0 { true } else { false } })
        }
        let again = flow.handle(.connected(info), now: .seconds(2))
        #expect(
            again.contains { if case .write = $0 { true } else { false } }, "the request goes again on the new link")
    }

    @Test func waitsForTheSwapBeforeReconnecting() throws {
        var options = Fixture.options(.confirmOnly)
        options.estimatedSwapTime = .seconds(12)
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        let outcomeRun = run.run()
        _ = try #require(try outcomeRun?.get())
        #expect(run.actions.contains(.connect(after: .seconds(12))))
    }

    @Test(arguments: McuMgrUpgradeMode.allCases.filter { $0 != .uploadOnly })
    func resetsAgainWhenTheResetRequestWasLost(mode: McuMgrUpgradeMode) throws {
        var run = UpgradeRun(image: image, options: Fixture.options(mode), device: Fixture.device(for: image))
        run.loseFirstReset = true
        let outcome = run.run()
        let result = try #require(try outcome?.get())
        #expect(run.device.resets == 1)
        #expect(run.retries.contains(.resetAgain))
        #expect(result.finalSlots.first?.hash == image.hash)
        #expect(run.device.primaryConfirmed == (mode != .testOnly))
    }

    @Test func retriesRefusedConnectionsAfterTheReset() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.refusedConnections = 3
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        let failedAttempts = run.retries.compactMap {
            if case let .connectAttemptFailed(attempt, _) = $0 { attempt } else { nil }
        }
        #expect(failedAttempts == [1, 2, 3])
        #expect(result.finalSlots.first?.hash == image.hash)
    }

    @Test func givesUpAfterTheAllowedConnectionAttempts() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.refusedConnections = 50
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(outcome.cause == .reconnectFailed(attempts: 5, last: .connectFailed("le-connection-abort-by-local")))
    }

    @Test func reportsAnImageThatDidNotBoot() throws {
        var device = Fixture.device(for: image)
        device.bootFails = true
        var run = UpgradeRun(image: image, options: Fixture.options(.confirmOnly), device: device)
        let raw = run.run()
        let outcome = try #require(raw)
        guard case let .verificationFailed(_, slots)? = outcome.cause else {
            Issue.record("expected a failed verification, got \(outcome)")
            return
        }
        #expect(slots.first?.hash == Fixture.runningHash && "\(outcome)".contains("reverted"))
    }

    @Test func goesOnWhenTheDeviceResetBeforeTheTestWasAnswered() throws {
        // The device sets the test, resets and swaps before its answer leaves; the test sent
        // again on the new connection names the running image, which Zephyr refuses (33).
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.resetInsteadOfAnswering = { $0.group == .image && $0.command == 0 && $0.operation == .writeResponse }
        let finished = run.run()
        let result = try #require(try finished?.get())
        #expect(run.device.primary.hash == image.hash && run.device.primaryConfirmed)
        #expect(run.told.contains(.alreadyRunningAfterTest))
        #expect(result.finalSlots.first { $0.slot == 0 }?.hash == image.hash)
    }

    @Test func refusesABoardWithoutTheSMPService() throws {
        var flow = McuMgrUpgrade(image: image)
        let actions = flow.handle(
            .start(ConnectionInfo(services: [PartialFlashingGATT.service], mtu: 247)), now: .zero)
        #expect(actions.last == .finish)
        #expect(flow.outcome?.cause == .smpServiceMissing)
    }
}
