import CBOR
import SMP
import Testing

@Suite("Upload chunk sizing")
struct UploadChunkingTests {
    static let sha = [UInt8](repeating: 0xAB, count: 32)

    /// The frame size of `template` carrying `count` data bytes, by encoding it.
    static func frameSize(_ template: ImageUploadRequest, dataCount count: Int) throws -> Int {
        var request = template
        request.data = [UInt8](repeating: 0x5A, count: count)
        return try SMPFrame(request: request, sequence: 0).encoded().count
    }

    static let templates: [ImageUploadRequest] = [
        .first(data: [], imageLength: 300, sha: sha),
        .first(data: [], imageLength: 70_000, sha: sha),
        .first(data: [], imageLength: 70_000, sha: sha, image: 1, upgrade: true),
        ImageUploadRequest(offset: 23, data: []),
        ImageUploadRequest(offset: 426, data: []),
        ImageUploadRequest(offset: 65_536, data: []),
        ImageUploadRequest(offset: 1 << 32, data: [])
    ]

    @Test(arguments: templates)
    func largestChunkFitsAndOneMoreByteDoesNot(_ template: ImageUploadRequest) throws {
        for limit in [
            SMPFrameLimit.attMTU(23), .attMTU(247), .attMTU(498), .reassemblyBuffer(384),
            .reassemblyBuffer(2475), .reassemblyBuffer(65_000)
        ] {
            guard let n = try? UploadChunking.maximumDataLength(fitting: limit, template: template) else {
                // Only the 20-byte frame of the default MTU is too small for any data.
                #expect(limit == .attMTU(23))
                continue
            }
            #expect(try Self.frameSize(template, dataCount: n) <= limit.maximumFrameSize, "\(limit)")
            #expect(try Self.frameSize(template, dataCount: n + 1) > limit.maximumFrameSize, "\(limit)")
        }
    }

    @Test func matchesTheWorkedFiguresForAFirstChunk() throws {
        // With sha and no image, a first chunk with len < 65536 has 64 bytes before the data head
        // (8 header + 56 of map; cbor2 agrees), so a 495-byte frame holds 495 − 64 − 3 = 428 bytes
        // and a 2475-byte buffer 2408. The estimate in docs/protocols/mcumgr-smp.md §3.1
        // (65 bytes, 426–428) brackets this.
        let first = ImageUploadRequest.first(data: [], imageLength: 60_000, sha: Self.sha)
        #expect(try UploadChunking.maximumDataLength(fitting: .attMTU(498), template: first) == 428)
        #expect(try UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(2475), template: first) == 2408)
    }

    /// Data bytes per chunk, computed independently with Python cbor2 by encoding
    /// candidate requests: (frame limit, first chunk len 60000, first chunk len 300000,
    /// first chunk len 300000 with image 1, later chunk at 4096, later chunk at 200000).
    @Test(arguments: [
        (244, [178, 176, 169, 221, 219]),
        (495, [428, 426, 419, 471, 469]),
        (2475, [2408, 2406, 2399, 2451, 2449])
    ])
    func matchesCbor2ComputedChunkSizes(_ limit: Int, _ expected: [Int]) throws {
        let templates = [
            ImageUploadRequest.first(data: [], imageLength: 60_000, sha: Self.sha),
            .first(data: [], imageLength: 300_000, sha: Self.sha),
            .first(data: [], imageLength: 300_000, sha: Self.sha, image: 1),
            ImageUploadRequest(offset: 4096, data: []),
            ImageUploadRequest(offset: 200_000, data: [])
        ]
        let sizes = try templates.map {
            try UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(limit), template: $0)
        }
        #expect(sizes == expected)
        #expect(
            try UploadChunking.maximumDataLength(fitting: .attMTU(limit + 3), template: templates[0]) == expected[0])
    }

    @Test func alignsDownToTheRequestedMultiple() throws {
        let next = ImageUploadRequest(offset: 4096, data: [])
        let unaligned = try UploadChunking.maximumDataLength(fitting: .attMTU(498), template: next)
        let aligned = try UploadChunking.maximumDataLength(fitting: .attMTU(498), template: next, alignment: 4)
        #expect(aligned % 4 == 0)
        #expect(aligned <= unaligned && unaligned - aligned < 4)
    }

    @Test func refusesFrameTooSmallForAnyData() {
        let first = ImageUploadRequest.first(data: [], imageLength: 1000, sha: Self.sha)
        #expect(throws: SMPError.self) { try UploadChunking.maximumDataLength(fitting: .attMTU(23), template: first) }
        #expect(throws: SMPError.invalidArgument("alignment must be at least 1, got 0")) {
            try UploadChunking.maximumDataLength(fitting: .reassemblyBuffer(2475), template: first, alignment: 0)
        }
    }
}
