import TestSupport
import CBOR
import SMP
import Testing

/// A port of the idea of NIO's `ByteToMessageDecoderVerifier`: the same byte
/// stream, fed whole, byte by byte and in seeded random splits, must give the
/// same frames and leave nothing behind.
@Suite("SMP reassembler")
struct SMPReassemblerTests {
    /// A realistic stream: every reference frame (requests, responses, both
    /// error forms) back to back, plus a large state response.
    static let frames: [SMPFrame] =
        ReferenceFrame.all.map(\.frame) + [
            SMPFrame(
                response: ImageStateResponse(
                    images: (0..<8).map {
                        ImageSlotState(
                            image: $0 / 2, slot: $0 % 2, version: "9.9.9.\($0)",
                            hash: Array(repeating: UInt8($0), count: 32))
                    }), to: SMPFrame(request: ImageStateReadRequest(), sequence: 99).header)
        ]

    static func stream() throws -> [UInt8] {
        try frames.flatMap { try $0.encoded() }
    }

    /// Feeds `chunks` and returns the decoded frames; the reassembler must end empty.
    static func feed(_ chunks: [ArraySlice<UInt8>]) throws -> [SMPFrame] {
        var reassembler = SMPReassembler()
        var out: [SMPFrame] = []
        for chunk in chunks { out += try reassembler.decode(chunk) }
        #expect(reassembler.bufferedByteCount == 0, "leftover bytes after the last frame")
        return out
    }

    static func expectSameFrames(_ got: [SMPFrame]) throws {
        #expect(got.count == frames.count)
        for (a, b) in zip(got, frames) {
            #expect(a.header == b.header)
            // Payload maps come back in encoded order, so compare encodings.
            #expect(try a.encoded() == b.encoded())
        }
    }

    @Test func decodesStreamFedAllAtOnce() throws {
        let bytes = try Self.stream()
        try Self.expectSameFrames(try Self.feed([bytes[...]]))
    }

    @Test func decodesStreamFedByteByByte() throws {
        let bytes = try Self.stream()
        try Self.expectSameFrames(try Self.feed(bytes.indices.map { bytes[$0...$0] }))
    }

    @Test(arguments: [1, 2, 3, 20, 244, 495])
    func decodesStreamFedInNotificationSizedPieces(_ size: Int) throws {
        let bytes = try Self.stream()
        let chunks = stride(from: 0, to: bytes.count, by: size).map { bytes[$0..<min($0 + size, bytes.count)] }
        try Self.expectSameFrames(try Self.feed(chunks))
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 2026])
    func decodesStreamFedInSeededRandomSplits(_ seed: UInt64) throws {
        let bytes = try Self.stream()
        var rng = SeededGenerator(seed: seed)
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 0...600, using: &rng))
            chunks.append(bytes[start..<end])
            start = end
        }
        try Self.expectSameFrames(try Self.feed(chunks))
    }

    @Test func waitsForTheRestOfAFrame() throws {
        let frame = try SMPFrame(request: EchoRequest(text: "hello"), sequence: 1).encoded()
        var reassembler = SMPReassembler()
        #expect(try reassembler.decode(frame.prefix(7)).isEmpty)
        #expect(try reassembler.decode(frame[7..<frame.count - 1]).isEmpty)
        #expect(reassembler.bufferedByteCount == frame.count - 1)
        #expect(try reassembler.decode(frame.suffix(1)).count == 1)
    }

    @Test func refusesHugeDeclaredLengthBeforeBufferingIt() {
        var reassembler = SMPReassembler(maximumPayloadLength: 2475 - 8)
        #expect(throws: SMPError.frameTooLarge(declared: 0xFFFF, limit: 2467)) {
            try reassembler.decode([0x09, 0, 0xFF, 0xFF, 0, 1, 0, 0])
        }
        #expect(reassembler.bufferedByteCount == 0)
    }

    @Test func skipsAFrameWithBadCBORAndContinuesWithTheNext() throws {
        let good = try SMPFrame(request: EchoRequest(text: "ok"), sequence: 2).encoded()
        var reassembler = SMPReassembler()
        reassembler.append([0x0B, 0, 0, 1, 0, 0, 1, 0, 0xFF] + good)
        #expect(throws: SMPError.invalidPayload(.unexpectedBreak(offset: 0))) { try reassembler.next() }
        #expect(try reassembler.next()?.request(as: EchoRequest.self) == EchoRequest(text: "ok"))
        #expect(try reassembler.next() == nil)
    }

    @Test func discardsTheStreamAfterAMalformedHeader() {
        var reassembler = SMPReassembler()
        #expect(throws: SMPError.self) { try reassembler.decode([0xE0, 0, 0, 0, 0, 0, 0, 0, 0xA0]) }
        #expect(reassembler.bufferedByteCount == 0)
    }
}
