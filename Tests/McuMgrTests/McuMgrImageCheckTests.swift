import Crypto
import FirmwareImage
import Testing
import SMP
import Transport
@testable import McuMgr

/// The image is checked before anything is sent: a damaged image, hashes that are not the
/// image's, or an image larger than the board's slot end the upgrade at once, with a reason,
/// exit status 65, and no suggestion that running it again would help.
@Suite struct McuMgrImageCheckTests {
    private let image = Fixture.image(size: 20_000, seed: 4)

    func refused(_ image: McuMgrUpgradeImage, options: McuMgrUpgradeOptions = Fixture.options()) throws -> (
        McuMgrError, UpgradeRun
    ) {
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        let finished = run.run()
        let cause = try #require(finished?.cause)
        #expect(run.writes.isEmpty, "nothing may reach the board")
        #expect(!run.actions.contains { if case .subscribe = $0 { true } else { false } })
        #expect(cause.failureKind == .badFirmware && !cause.isTransient)
        #expect("\(cause)".contains("nothing was sent to the board"))
        #expect(!"\(cause)".contains("try again") && !"\(cause)".contains("run the"))
        return (cause, run)
    }

    @Test func aDamagedImageIsRefusedBeforeTheUpload() throws {
        var damaged = image
        damaged.bytes[5_000] ^= 0x01
        damaged.fileSHA256 = Array(SHA256.hash(data: damaged.bytes))
        let (cause, _) = try refused(damaged)
        guard case let .invalidImage(.hashMismatch(stored, computed)) = cause else {
            Issue.record("expected a hash mismatch, got \(cause)")
            return
        }
        #expect(stored == image.hash && computed != image.hash)
        #expect("\(cause)".contains("does not match the SHA-256 of its header, body and protected TLVs"))
    }

    @Test func hashesThatAreNotTheImagesAreRefused() throws {
        var wrongHash = image
        wrongHash.hash = [UInt8](repeating: 7, count: 32)
        guard case .invalidImage(.hashesNotTheImages) = try refused(wrongHash).0 else {
            Issue.record("a wrong image hash was not refused")
            return
        }
        var wrongFile = image
        wrongFile.fileSHA256 = [UInt8](repeating: 8, count: 32)
        let (cause, _) = try refused(wrongFile)
        #expect("\(cause)".contains("the file SHA-256 given (0808080808080808…) is not that of the image's bytes"))
    }

    @Test func anImpossibleImageSizeIsRefused() throws {
        var huge = image
        huge.bytes.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        huge.fileSHA256 = Array(SHA256.hash(data: huge.bytes))
        guard case .invalidImage(.malformed) = try refused(huge).0 else {
            Issue.record("an image whose img_size runs past the file was not refused")
            return
        }
    }

    @Test func anImageLargerThanTheSlotIsRefusedWithTheSlotsSource() throws {
        var options = Fixture.options()
        options.slotSize = SlotSize(bytes: 16_384, source: .profile)
        let (cause, _) = try refused(image, options: options)
        #expect(cause == .invalidImage(.tooLarge(bytes: 20_000, slot: 16_384, from: .profile)))
        #expect(
            "\(cause)".contains(
                "it has 20000 bytes and the board's slot holds 16384 (from the board profile): build a smaller image"))
        // The same image with room to spare goes through.
        options.slotSize = SlotSize(bytes: 20_000, source: .board)
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        let finished = run.run()
        #expect(try finished?.get() != nil)
    }

    @Test func theProfileSlotRunsFromTheHeaderPageToTheScratchPage() {
        #expect(McuMgrUpgradeImage.profileSlotSize(for: .nrf52833) == 0x73000 - 0x1B000)
        #expect(McuMgrUpgradeImage.profileSlotSize(for: .nrf51) == 0x3B400 - 0x17C00)
    }

    @Test func transientFailuresAloneInviteARetry() {
        #expect(McuMgrError.noResponse(command: "image upload", attempts: 4, timeout: .seconds(10)).isTransient)
        #expect(McuMgrError.uploadMismatch.isTransient)
        #expect(!McuMgrError.deviceRefused(command: "image upload", .group(.image(.invalidImageTooLarge))).isTransient)
        #expect(
            McuMgrError.deviceRefused(command: "image upload", .group(.image(.invalidImageTooLarge))).failureKind
                == .badFirmware)
        #expect(!McuMgrError.verificationFailed(expected: "x", slots: []).isTransient)
        #expect(McuMgrError.deviceRefused(command: "image upload", .returnCode(.busy)).isTransient)
    }
}
