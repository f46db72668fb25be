import CBOR
import FirmwareImage
import Flashing
import PartialFlashing
import PartialFlashingFrames
import SMP
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        let region = RegionInfo(
            id: 2, start: program.magicAddress, end: family.layout.scratchPage, hash: program.programHash)
        guard let plan = try? BlockPlan(image: image, program: program, boardRegion: region, family: family) else {
            return nil
        }
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
            guard let frame = try? SMPFrame(bytes: bytes), let r = try? frame.request(as: ImageUploadRequest.self)
            else { return 0 }
            return r.data.count
        }
    }

    /// Encoding a CBOR map like an SMP state-read answer: two slots with hashes and flags.
    public static func cborEncoding() -> Operation {
        func pair(_ key: String, _ value: CBOR) -> CBOR.Pair { CBOR.Pair(.textString(key), value) }
        func slot(_ n: Int) -> CBOR {
            .map([
                pair("slot", .int(n)), pair("version", .textString("1.2.\(n)")),
                pair("hash", .byteString([UInt8](repeating: UInt8(n), count: 32))),
                pair("bootable", .boolean(true)), pair("pending", .boolean(false)),
                pair("confirmed", .boolean(n == 0)), pair("active", .boolean(n == 0))
            ])
        }
        let value = CBOR.map([pair("images", .array([slot(0), slot(1)])), pair("splitStatus", .int(0))])
        let encoder = CBOREncoder()
        return Operation(name: "CBOR state-read encode", unit: "2-slot map") { encoder.encode(value).count }
    }

    /// An upload request whose encoded frame is `frameSize` bytes.
    static func uploadRequest(frameSize: Int) -> ImageUploadRequest {
        let template = ImageUploadRequest(offset: 100_000, data: [])
        let length =
            (try? UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(frameSize), template: template)) ?? 2048
        let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        return ImageUploadRequest(offset: 100_000, data: data)
    }

    private static let results = Mutex(0)

    /// The best time per operation over batches of about 40 ms each, for about 0.2 s in all.
    public static func time(_ body: () -> Int) -> Double {
        var sink = body()
        let clock = ContinuousClock()
        var count = 1
        while true {
            let d = clock.measure { for _ in 0..<count { sink &+= body() } }
            if d >= .milliseconds(40) || count >= 1 << 24 { break }
            count *= 2
        }
        var best = Double.infinity
        for _ in 0..<5 {
            let d = clock.measure { for _ in 0..<count { sink &+= body() } }
            best = min(best, d.seconds / Double(count))
        }
        results.withLock { $0 &+= sink }  // kept, so that the optimiser cannot drop the work
        return best
    }

    public static func format(_ seconds: Double) -> String {
        switch seconds {
        case ..<1e-6: return String(format: "%.0f ns", seconds * 1e9)
        case ..<1e-3: return String(format: "%.2f µs", seconds * 1e6)
        case ..<1: return String(format: "%.2f ms", seconds * 1e3)
        default: return String(format: "%.3f s", seconds)
        }
    }

    /// Peak resident set size of this process in bytes (`bench parse` reports it too).
    public static func peakRSS() -> Int {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return Int(usage.ru_maxrss) * 1024
        #else
            getrusage(RUSAGE_SELF, &usage)
            return Int(usage.ru_maxrss)
        #endif
    }
}
