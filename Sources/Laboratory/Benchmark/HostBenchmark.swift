import CBOR
import FirmwareImage
import Flashing
import PartialFlashing
import PartialFlashingFrames
import SMP

/// The CPU hot paths the host benchmark times, each as one repeatable operation that
/// returns a value (so that the optimiser cannot drop the work).
public enum HostBenchmark {
    /// One timed operation.
    public struct Operation: Sendable {
        public var name: String
        /// What one operation handles, e.g. `310 blocks` or `2475-byte frame`.
        public var unit: String
        public var body: @Sendable () -> Int

        public init(name: String, unit: String, body: @escaping @Sendable () -> Int) {
            self.name = name
            self.unit = unit
            self.body = body
        }
    }

    /// Planning the blocks of `image`'s MakeCode program for a board that declares the whole
    /// application region writable. Nil when the image has no program.
    public static func blockPlanning(image: MemoryImage, family: ChipFamily) -> Operation? {
        guard let program = MakeCodeProgram.find(in: image, family: family) else { return nil }
        let region = RegionInfo(id: 2, start: program.magicAddress, end: family.layout.scratchPage, hash: program.programHash)
        guard let plan = try? BlockPlan(image: image, program: program, boardRegion: region, family: family) else { return nil }
        return Operation(name: "block planning", unit: "\(plan.blockCount) blocks") {
            (try? BlockPlan(image: image, program: program, boardRegion: region, family: family))?.blockCount ?? 0
        }
    }

    /// Encoding one full-size image-upload frame (CBOR payload and SMP header) of `frameSize` bytes.
    public static func smpEncoding(frameSize: Int = 2475) -> Operation {
        let request = uploadRequest(frameSize: frameSize)
        return Operation(name: "SMP upload frame encode", unit: "\(frameSize)-byte frame") {
            (try? SMPFrame(request: request, sequence: 7).encoded())?.count ?? 0
        }
    }

    /// Decoding the same frame, as the simulated server does for every chunk.
    public static func smpDecoding(frameSize: Int = 2475) -> Operation {
        let bytes = (try? SMPFrame(request: uploadRequest(frameSize: frameSize), sequence: 7).encoded()) ?? []
        return Operation(name: "SMP upload frame decode", unit: "\(bytes.count)-byte frame") {
            guard let frame = try? SMPFrame(bytes: bytes), let r = try? frame.request(as: ImageUploadRequest.self) else { return 0 }
            return r.data.count
        }
    }

    /// Encoding a CBOR map like an SMP state-read answer: two slots with hashes and flags.
    public static func cborEncoding() -> Operation {
        func pair(_ key: String, _ value: CBOR) -> CBOR.Pair { CBOR.Pair(.textString(key), value) }
        func slot(_ n: Int) -> CBOR {
            .map([pair("slot", .int(n)), pair("version", .textString("1.2.\(n)")),
                  pair("hash", .byteString([UInt8](repeating: UInt8(n), count: 32))),
                  pair("bootable", .boolean(true)), pair("pending", .boolean(false)),
                  pair("confirmed", .boolean(n == 0)), pair("active", .boolean(n == 0))])
        }
        let value = CBOR.map([pair("images", .array([slot(0), slot(1)])), pair("splitStatus", .int(0))])
        let encoder = CBOREncoder()
        return Operation(name: "CBOR state-read encode", unit: "2-slot map") { encoder.encode(value).count }
    }

    /// An upload request whose encoded frame is `frameSize` bytes.
    static func uploadRequest(frameSize: Int) -> ImageUploadRequest {
        let template = ImageUploadRequest(offset: 100_000, data: [])
        let length = (try? UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(frameSize), template: template)) ?? 2048
        let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        return ImageUploadRequest(offset: 100_000, data: data)
    }
}
