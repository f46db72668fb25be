import Testing
import SMP
import Transport
@testable import McuMgr

@Suite struct McuMgrValidateTests {
    private let image = Fixture.image(size: 8_000, seed: 2)

    @Test func finishesWithoutSendingWhenTheImageAlreadyRunsConfirmed() throws {
        var device = Fixture.device(for: image)
        device.primary = .init(bytes: image.bytes, hash: image.hash, version: "2.0.0")
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.alreadyInstalled && result.uploadSkipped && result.chunks == 0)
        // Only the parameters and the state read went out.
        #expect(run.device.requests.map(\.command) == [6, 0] && run.device.resets == 0)
    }

    @Test func uploadsAgainWhenTheSecondarySlotHoldsALeftoverOfTheImage() throws {
        // Neither pending nor permanent: a failed upload may have left it (its TLV hash says
        // nothing about the data), so it is replaced rather than trusted.
        var device = Fixture.device(for: image)
        device.secondary = .init(bytes: image.bytes, hash: image.hash, version: "2.0.0")
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(!result.uploadSkipped && result.bytesSent >= image.bytes.count)
        #expect(!run.device.uploads.isEmpty)
        #expect(run.device.primary.hash == image.hash && run.device.primaryConfirmed)
    }

    @Test func onlyConfirmsWhenTheImageRunsUnderTest() throws {
        var device = Fixture.device(for: image)
        device.primary = .init(bytes: image.bytes, hash: image.hash, version: "2.0.0")
        device.primaryConfirmed = false
        device.revertible = true
        device.secondary = .init(bytes: [9], hash: Fixture.runningHash, version: "1.0.0")
        var run = UpgradeRun(image: image, options: Fixture.options(.confirmOnly), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.uploadSkipped && run.device.uploads.isEmpty && run.device.resets == 0)
        #expect(run.phases == [.confirm, .verify, .done])
        #expect(run.device.primaryConfirmed)
    }

    @Test func confirmsTheRunningImageFirstWhenAConfirmedImageWaitsInSlotOne() throws {
        let other = [UInt8](repeating: 0x22, count: 32)
        var device = Fixture.device(for: image)
        device.primary = .init(bytes: [7], hash: other, version: "1.5.0")
        device.primaryConfirmed = false
        device.revertible = true
        device.secondary = .init(bytes: [9], hash: Fixture.runningHash, version: "1.0.0")
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        _ = try #require(try outcomeRun?.get())
        // params, read, confirm (write, command 0), read again, then the upload.
        let ops = run.device.requests.prefix(5).map { "\($0.group.rawValue).\($0.command).\($0.operation)" }
        #expect(ops == ["0.6.read", "1.0.read", "1.0.write", "1.0.read", "1.1.write"])
        #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
    }

    @Test func resetsFirstWhenAnotherImageIsPending() throws {
        var device = Fixture.device(for: image)
        device.secondary = .init(bytes: [5], hash: [UInt8](repeating: 0x33, count: 32), version: "1.9.0")
        device.pendingTest = true
        var run = UpgradeRun(image: image, options: Fixture.options(.confirmOnly), device: device)
        let outcomeRun = run.run()
        _ = try #require(try outcomeRun?.get())
        #expect(run.device.resets == 2)
        #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
    }

    @Test func refusesToTestAnImageThatIsAlreadyConfirmedForTheNextBoot() throws {
        var device = Fixture.device(for: image)
        device.secondary = .init(bytes: image.bytes, hash: image.hash, version: "2.0.0")
        device.pendingTest = true
        device.pendingPermanent = true
        var run = UpgradeRun(image: image, options: Fixture.options(.testOnly), device: device)
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(outcome.cause == McuMgrError.alreadyConfirmedCannotTest)
    }

    @Test func uploadsWhenTheDeviceListsNoReadableImage() {
        #expect(ValidateDecision.decide(slots: [], image: image, mode: .testAndConfirm) == .upload)
    }

    @Test func ignoresSlotsOfOtherImageNumbers() {
        let netCore = ImageSlotState(image: 1, slot: 1, version: "1.0.0", hash: image.hash, pending: true)
        let app = ImageSlotState(
            image: 0, slot: 0, version: "1.0.0", hash: Fixture.runningHash, confirmed: true, active: true)
        #expect(ValidateDecision.decide(slots: [app, netCore], image: image, mode: .testAndConfirm) == .upload)
    }

    @Test func verificationRequiresTheConfirmedImageInSlotZero() {
        let ours = ImageSlotState(slot: 0, version: "2.0.0", hash: image.hash, confirmed: false, active: true)
        #expect(ValidateDecision.verify(slots: [ours], image: image, mode: .testOnly))
        #expect(!ValidateDecision.verify(slots: [ours], image: image, mode: .testAndConfirm))
        let stillOld = ImageSlotState(
            slot: 0, version: "1.0.0", hash: Fixture.runningHash, confirmed: true, active: true)
        #expect(!ValidateDecision.verify(slots: [stillOld], image: image, mode: .confirmOnly))
    }
}
