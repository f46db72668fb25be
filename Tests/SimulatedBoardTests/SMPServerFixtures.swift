import FirmwareImage
import LinkModel
import McuMgr
import SMP
@testable import SimulatedBoard

/// MCUboot images of MakeCode-style firmware for the simulated McuMgr board: the
/// application region of a test image (runtime, zeros, program with magic and hashes),
/// wrapped with a one-page header so that its payload lands at the application start.
enum SMPFixture {
    static let family = ChipFamily.nrf52833
    static var layout: MemoryLayout { family.layout }
    static let oldProgramHash: [UInt8] = Fixture.programHash
    static let newProgramHash: [UInt8] = [0x5A, 0x11, 0x0C, 0x3D, 0x42, 0x99, 0x01, 0xE7]
    static let oldRuntimeHash: [UInt8] = Fixture.runtimeHash
    static let newRuntimeHash: [UInt8] = [0xC0, 0xDA, 0x1F, 0x00, 0x2B, 0x7E, 0x33, 0x10]

    /// The application payload of a test firmware whose program magic sits at `magicAt`,
    /// with the runtime and program hashes the MakeCode header carries.
    static func payload(
        magicAt: UInt32, programLength: Int, seed: Int, programHash: [UInt8],
        runtimeHash: [UInt8] = Fixture.runtimeHash
    ) -> [UInt8] {
        let image = Fixture.image(
            family: family, magicAt: magicAt, programLength: programLength, seed: seed,
            programHash: programHash)
        let end = image.span?.upperBound ?? layout.applicationStart
        var bytes = image.read(layout.applicationStart..<end)
        let at = Int(magicAt - layout.applicationStart) + 16
        bytes.replaceSubrange(at..<(at + 8), with: runtimeHash)
        return bytes
    }

    /// The running image and the update, both about `size` bytes (the program grows with it).
    static func images(magicAt: UInt32 = 0x40000, programLength: Int = 0x5000) throws -> (
        old: SimulatedMCUbootImage, new: SimulatedMCUbootImage
    ) {
        let old = try SimulatedMCUbootImage(
            payload: payload(
                magicAt: magicAt, programLength: programLength, seed: 3,
                programHash: oldProgramHash), version: MCUbootVersion(major: 1))
        let new = try SimulatedMCUbootImage(
            payload: payload(
                magicAt: magicAt, programLength: programLength + 0x321, seed: 9,
                programHash: newProgramHash, runtimeHash: newRuntimeHash),
            version: MCUbootVersion(major: 2, minor: 1, revision: 3, build: 4))
        return (old, new)
    }

    static func upgrade(_ image: SimulatedMCUbootImage) -> McuMgrUpgradeImage {
        McuMgrUpgradeImage(bytes: image.bytes, hash: image.hash, fileSHA256: image.fileSHA256)
    }

    static func options(_ mode: McuMgrUpgradeMode = .testAndConfirm, fast: Bool) -> McuMgrUpgradeOptions {
        var options = McuMgrUpgradeOptions(mode: mode, pipelineDepth: fast ? nil : 1, useReassembly: fast)
        options.estimatedSwapTime = .zero
        options.traceBytes = 0
        return options
    }

    /// The bytes of upload frames besides their data, for a chunk in the middle of an image.
    static func frameOverhead(frameLimit: Int) throws -> Int {
        let template = ImageUploadRequest(offset: 100_000, data: [])
        let data = try UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(frameLimit), template: template)
        return frameLimit - data
    }

    /// The full-DFU lower bound for replacing `old` with `new` over `profile` with frames of `frameLimit`.
    static func bound(old: SimulatedMCUbootImage, new: SimulatedMCUbootImage, frameLimit: Int, profile: LinkProfile)
        throws -> Duration
    {
        var configuration = SMPServerConfiguration.standard(for: layout, attMTU: 247)
        configuration.bufferSize = frameLimit
        let page = Int(configuration.pageSize)
        let pages = (max(old.bytes.count, new.bytes.count) + page - 1) / page
        return configuration.lowerBound(
            imageBytes: new.bytes.count, frameOverhead: try frameOverhead(frameLimit: frameLimit),
            swapPages: pages, profile: profile, timing: DeviceTiming.of(family))
    }
}
