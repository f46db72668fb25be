import Testing
import SMP
import Transport
@testable import McuMgr

/// The upload's retry budget is tied to progress: retries count since the device last took
/// new bytes, under a ceiling for the whole run and a time limit.
@Suite struct McuMgrRetryBudgetTests {
    private let image = Fixture.image(size: 120_000, seed: 8)

    @Test func anUploadThatKeepsAdvancingFinishesWhateverItsRetries() throws {
        var device = Fixture.device(for: image)
        // One upload frame in four never reaches the device, all the way through.
        device.lostUploadFrames = Set(stride(from: 3, to: 2_000, by: 4))
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let finished = run.run()
        let result = try #require(try finished?.get())
        #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
        // Far more retries than any fixed budget of old (25), never many in a row.
        #expect(result.retries > 25, "\(result.retries) retries")
        #expect(result.mostRetriesWithoutProgress <= 2)
    }

    @Test func aDeviceThatStopsTakingDataEndsWithAClearErrorWithinTheBudget() throws {
        var device = Fixture.device(for: image)
        device.stuckAt = 30_000
        var options = Fixture.options()
        options.maximumRetriesWithoutProgress = 6
        var run = UpgradeRun(image: image, options: options, device: device)
        let finished = run.run()
        let outcome = try #require(finished)
        guard case let .uploadStalled(offset, total, attempts)? = outcome.cause, case let .failure(error) = outcome
        else {
            Issue.record("expected a stalled upload, got \(outcome)")
            return
        }
        #expect(offset >= 30_000 && offset < 30_000 + 2475 && total == image.bytes.count && attempts == 7)
        #expect("\(error)".contains("took no new bytes through 7 retries at offset \(offset) of \(image.bytes.count)"))
        // Six retries after the device stopped: the run never went past the budget.
        #expect(run.retries.count == 6)
        #expect(run.retries.allSatisfy { if case .offsetMismatch = $0 { true } else { false } }, "\(run.retries)")
    }

    @Test func theRunCeilingEndsAnUploadThatAdvancesOnlyByInches() throws {
        var device = Fixture.device(for: image)
        device.lostUploadFrames = Set(stride(from: 3, to: 2_000, by: 4))
        var options = Fixture.options()
        options.maximumRetriesPerRun = 8
        var run = UpgradeRun(image: image, options: options, device: device)
        let finished = run.run()
        let outcome = try #require(finished)
        #expect(outcome.cause == McuMgrError.tooManyRetries(8))
    }

    @Test func theTimeLimitEndsAnUpgradeThatIsStillRunning() throws {
        var options = Fixture.options()
        options.maximumDuration = .seconds(25)
        options.reconnectAfterTimeouts = 0
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        run.silent = true
        let finished = run.run()
        let outcome = try #require(finished)
        #expect(outcome.cause == McuMgrError.timeLimitReached(.seconds(25), offset: 0, total: image.bytes.count))
        #expect(run.now > .seconds(25) && run.now <= .seconds(40))
    }

    @Test func optionsWithNegativeBudgetsAreRefused() throws {
        var options = Fixture.options()
        options.maximumRetriesWithoutProgress = -1
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        let finished = run.run()
        let outcome = try #require(finished)
        #expect(outcome.cause == McuMgrError.invalidInput("retry limits must not be negative"))
    }
}
