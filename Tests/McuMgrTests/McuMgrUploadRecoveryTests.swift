import Testing
import SMP
import Transport
@testable import McuMgr

@Suite struct McuMgrUploadRecoveryTests {
    private let image = Fixture.image(size: 50_000, seed: 5)

    @Test func resendsFromTheDeviceOffsetWhenAChunkIsLost() throws {
        var device = Fixture.device(for: image)
        device.lostUploadFrames = [5]
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.retries == 1)
        // The lost chunk and the ones in flight behind it (depth 3) go again; nothing else.
        #expect(result.resentBytes > 2 * 2400 && result.resentBytes <= 3 * 2475)
        #expect(run.retries.contains { if case .offsetMismatch = $0 { true } else { false } })
        // From then on every frame fits one write: a write lost from a longer frame loses the frame.
        let uploads = run.device.uploads
        let retry = try #require(uploads.indices.first { $0 > 0 && uploads[$0].offset < uploads[$0 - 1].offset })
        #expect(uploads[retry...].allSatisfy { $0.data.count < 244 })
        #expect(run.told.contains { if case .framesFitOneWrite(.deviceExpects, 244) = $0 { true } else { false } })
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func retriesALostAnswerWithoutPipelining() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(depth: 1), device: Fixture.device(for: image))
        run.lostNotifications = [10]
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        // The timeout re-sends from the chunk (in a frame of one write: a lost answer and a lost
        // write look the same); the device, already past it, answers with the offset after it,
        // and the upload goes on from there without another retry.
        #expect(result.retries == 1)
        #expect(result.resentBytes > 0 && result.resentBytes < 244)
        #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
    }

    @Test func aLaterAnswerCoversALostOneWhenPipelining() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.lostNotifications = [10]
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.retries == 0 && result.resentBytes == 0)
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func givesUpWithAClearErrorWhenTheDeviceStaysSilent() throws {
        var options = Fixture.options()
        options.reconnectAfterTimeouts = 0
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        run.silent = true
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(
            outcome.cause == McuMgrError.noResponse(command: "image state read", attempts: 4, timeout: .seconds(10)))
        let text = "\(McuMgrError.noResponse(command: "image state read", attempts: 4, timeout: .seconds(10)))"
        #expect(text.contains("did not answer image state read") && text.contains("move closer"))
        // Parameters: 1 + 3 retries, then tolerated; state read: 1 + 3 retries, then the error.
        #expect(run.writes.count == 8)
        let unanswered = McuMgrRetryCause.noAnswerWithin(.seconds(10))
        #expect(
            run.retries
                == [MCUmgrParametersRequest.name, ImageStateReadRequest.name].flatMap { command in
                    (2...4).map { McuMgrReport.requestRetried(command: command, cause: unanswered, attempt: $0) }
                })
    }

    @Test func reconnectsAfterTwoTimeoutsInARowThenGivesUp() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.silent = true
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(outcome.cause == McuMgrError.tooManyDisconnects(6))
        #expect(run.actions.filter { $0 == .disconnect }.count == 6)
    }

    @Test func writesShorterAfterTheLinkDropsLongWritesWithoutAnError() throws {
        // Seen between two BlueZ controllers: 244-byte write commands vanish, short ones arrive.
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.dropsWritesLongerThan = 150
        let result = try #require(try run.run()?.get())
        #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
        #expect(run.told.contains { if case .writesShortened(_, 122) = $0 { true } else { false } })
        #expect(result.pipelineDepth == 1)
        let lastLong = try #require(run.writes.lastIndex { $0.count > 150 })
        let after = run.writes[(lastLong + 1)...]
        #expect(after.count > image.bytes.count / 122, "the image went in short writes")
        #expect(after.allSatisfy { $0.count <= 122 })
    }

    @Test func withoutReassemblyWritesNeverShrinkBelowAFirstChunk() throws {
        // One write per frame: at 61 bytes a frame cannot hold the first chunk, so writes stop at 122.
        var run = UpgradeRun(
            image: image, options: Fixture.options(reassembly: false), device: Fixture.device(for: image))
        run.dropsWritesLongerThan = 100
        let finished = run.run()
        let outcome = try #require(finished)
        let writeSizes = run.told.compactMap { if case let .writesShortened(_, size) = $0 { size } else { nil } }
        #expect(writeSizes.contains(122))
        #expect(!writeSizes.contains(61))
        guard case let .failure(error) = outcome else {
            Issue.record("every upload write is lost, yet it succeeded"); return
        }
        // The link's failure, not a frame too small for the image.
        #expect(
            error is McuMgrFailure && "\(error)".contains("move closer") && !"\(error)".contains("no room"), "\(error)")
    }

    @Test func writesKeepTheirSizeWhenTheDeviceIsSilentForOtherReasons() throws {
        // Timeouts before the upload (a state read) do not shrink the writes.
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        run.silent = true
        _ = run.run()
        #expect(!run.told.contains { if case .writesShortened = $0 { true } else { false } })
    }

    @Test func reconnectingClearsADeviceStuckInAHalfFrame() throws {
        var run = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        // A stray write leaves the device waiting for the rest of a 2000-byte frame.
        _ = run.device.receive(write: [0x0A, 0x00, 0x07, 0xC8, 0x00, 0x01, 0x77, 0x01])
        let raw = run.run()
        let result = try #require(try raw?.get())
        #expect(run.actions.contains(.disconnect))
        #expect(result.retries >= 2)
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func reportsAV2GroupErrorWithItsNameAndAdvice() throws {
        var device = Fixture.device(for: image)
        device.refuse = { header, _ in header.command == 1 ? .group(.image(.noFreeSlot)) : nil }
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let raw = run.run()
        let outcome = try #require(raw)
        let expected = McuMgrError.deviceRefused(command: "image upload", .group(.image(.noFreeSlot)))
        #expect(outcome.cause == expected)
        #expect("\(expected)".contains("IMG_MGMT_ERR_NO_FREE_SLOT") && "\(expected)".contains("reset the board"))
    }

    @Test func reportsAV1ReturnCodeWithItsNameAndAdvice() throws {
        var device = Fixture.device(for: image)
        device.refuse = { header, _ in header.command == 1 ? .group(.image(.noFreeSlot)) : nil }
        var options = Fixture.options()
        options.smpVersion = .v1
        var run = UpgradeRun(image: image, options: options, device: device)
        let raw = run.run()
        let outcome = try #require(raw)
        let expected = McuMgrError.deviceRefused(command: "image upload", .returnCode(.badState))
        #expect(outcome.cause == expected)
        #expect("\(expected)".contains("MGMT_ERR_EBADSTATE"))
    }

    @Test func retriesACommandTheDeviceIsTooBusyFor() throws {
        var device = Fixture.device(for: image)
        var busyOnce = true
        device.refuse = { header, _ in
            guard header.group == .image, header.command == 0, header.operation == .write, busyOnce else { return nil }
            busyOnce = false
            return .returnCode(.busy)
        }
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.retries == 1)
        #expect(run.actions.contains(.startTimer(McuMgrUpgrade.busyTimer, .milliseconds(100))))
    }

    @Test func failsWhenTheDeviceSaysTheUploadDoesNotMatch() throws {
        var device = Fixture.device(for: image)
        device.catalogue = [(image.bytes, image.hash, [UInt8](repeating: 0, count: 32))]
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(outcome.cause == McuMgrError.uploadMismatch)
    }

    @Test func refusesAnMTUTooSmallForTheFirstChunk() throws {
        var run = UpgradeRun(
            image: image, options: Fixture.options(reassembly: false), device: Fixture.device(for: image))
        run.mtu = 23
        let raw = run.run()
        let outcome = try #require(raw)
        #expect(outcome.cause == McuMgrError.uploadFrameTooSmall(limit: 20))
    }
}
