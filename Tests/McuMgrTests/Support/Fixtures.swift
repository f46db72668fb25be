import Crypto
import FirmwareImage
import SMP
@testable import McuMgr

/// Test images: unsigned MCUboot images (a 32-byte header, a deterministic pseudo-random
/// body, the SHA-256 TLV) of exactly `size` bytes, with their real TLV hash and file SHA-256.
enum Fixture {
    static func image(size: Int, seed: UInt64 = 1) -> McuMgrUpgradeImage {
        var body: [UInt8] = []
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        // Header 32 bytes, TLV area 4 + 4 + 32 bytes.
        while body.count < size - 32 - 40 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            body.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        let bytes = try! MCUbootImage.build(application: body, version: MCUbootVersion(major: 2), headerSize: 32)
        let hash = try! MCUbootImage(bytes: bytes).reportedHash!
        return McuMgrUpgradeImage(bytes: bytes, hash: hash, fileSHA256: Array(SHA256.hash(data: bytes)))
    }

    static let runningHash = [UInt8](repeating: 0x11, count: 32)

    /// A device running another, confirmed image, that knows `image` by content.
    static func device(for image: McuMgrUpgradeImage) -> FakeImageDevice {
        var device = FakeImageDevice(primary: .init(bytes: [1, 2, 3], hash: runningHash, version: "1.0.0"))
        device.catalogue = [(image.bytes, image.hash, image.fileSHA256)]
        return device
    }

    static func options(_ mode: McuMgrUpgradeMode = .testAndConfirm, depth: Int? = nil, reassembly: Bool = true)
        -> McuMgrUpgradeOptions
    {
        var options = McuMgrUpgradeOptions(mode: mode, pipelineDepth: depth, useReassembly: reassembly)
        options.traceBytes = 16
        return options
    }
}

extension Result where Failure == any Error {
    /// The cause of a failed upgrade (nil on success, or for another error).
    var cause: McuMgrError? {
        guard case let .failure(error) = self else { return nil }
        return (error as? McuMgrFailure)?.cause
    }

    /// What a failed upgrade reports of the board.
    var board: McuMgrBoardState? {
        guard case let .failure(error) = self else { return nil }
        return (error as? McuMgrFailure)?.board
    }
}
