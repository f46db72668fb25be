import SMP
@testable import McuMgr

/// Test images: an MCUboot-shaped header (magic 0x96f3b83d, header size 0x20)
/// followed by a deterministic pseudo-random body, with made-up TLV hash and
/// file SHA-256 (the client only passes them on).
enum Fixture {
    static func image(size: Int, seed: UInt64 = 1) -> McuMgrUpgradeImage {
        var bytes: [UInt8] = [0x3D, 0xB8, 0xF3, 0x96, 0, 0, 0, 0, 0x20, 0, 0, 0]
        let body = size - 32
        bytes += [UInt8(body & 0xFF), UInt8(body >> 8 & 0xFF), UInt8(body >> 16 & 0xFF), 0]
        bytes += [UInt8](repeating: 0, count: 4) + [2, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        while bytes.count < size {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        let hash = (0..<32).map { UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ $0) }
        let sha = (0..<32).map { UInt8(truncatingIfNeeded: Int(seed) &* 17 &+ 100 &+ $0) }
        return McuMgrUpgradeImage(bytes: bytes, hash: hash, fileSHA256: sha)
    }

    static let runningHash = [UInt8](repeating: 0x11, count: 32)

    /// A device running another, confirmed image, that knows `image` by content.
    static func device(for image: McuMgrUpgradeImage) -> FakeImageDevice {
        var device = FakeImageDevice(primary: .init(bytes: [1, 2, 3], hash: runningHash, version: "1.0.0"))
        device.catalogue = [(image.bytes, image.hash, image.fileSHA256)]
        return device
    }

    static func options(_ mode: McuMgrUpgradeMode = .testAndConfirm, depth: Int? = nil, reassembly: Bool = true) -> McuMgrUpgradeOptions {
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
