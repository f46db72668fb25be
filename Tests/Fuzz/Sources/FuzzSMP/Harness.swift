import CBOR
import SMP

/// libFuzzer entry point for the SMP decoders: `SMPFrame(bytes:)`, `SMPReassembler` fed the
/// input cut at positions taken from the input, and `response(as:)` for every response type.
/// Every failure must be an `SMPError`; a decoded frame must encode back to the same header.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSMP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let frame = try? SMPFrame(bytes: bytes) { exercise(frame) }

    // The first byte picks the cut sizes; the rest is the notification stream.
    guard let first = bytes.first else { return 0 }
    let stream = Array(bytes.dropFirst())
    var reassembler = SMPReassembler(maximumPayloadLength: first & 1 == 0 ? 8192 : 64)
    var position = 0
    var cut = Int(first >> 1) % 23 + 1
    var received = 0
    while position < stream.count {
        let end = min(stream.count, position + cut)
        do {
            for frame in try reassembler.decode(stream[position..<end]) {
                received += 1
                exercise(frame)
            }
        } catch {
            // Expected for hostile input; the reassembler must stay usable.
        }
        precondition(reassembler.bufferedByteCount <= stream.count, "buffered more than was received")
        // Vary the cut with the data itself, so the fuzzer controls every split.
        cut = Int(stream[position]) % 31 + 1
        position = end
    }
    precondition(received <= stream.count / SMPHeader.size, "more frames than 8-byte headers")
    return 0
}

func exercise(_ frame: SMPFrame) {
    // What decoded encodes again with the same header fields and decodes to the same frame.
    if let again = try? frame.encoded() {
        guard let back = try? SMPFrame(bytes: again) else { fatalError("re-encoded frame \(frame) does not decode") }
        precondition(
            back.header.group == frame.header.group && back.header.command == frame.header.command
                && back.header.sequence == frame.header.sequence, "re-encoding changed the header of \(frame)")
    }
    _ = frame.description
    _ = try? frame.errorResponse()
    _ = try? frame.response(as: EchoResponse.self)
    _ = try? frame.response(as: ResetResponse.self)
    _ = try? frame.response(as: MCUmgrParametersResponse.self)
    _ = try? frame.response(as: BootloaderInfoResponse.self)
    _ = try? frame.response(as: ImageStateResponse.self)
    _ = try? frame.response(as: ImageUploadResponse.self)
    _ = try? frame.response(as: ImageEraseResponse.self)
    _ = try? frame.request(as: ImageUploadRequest.self)
    _ = try? frame.request(as: ImageStateWriteRequest.self)
    _ = try? frame.request(as: ResetRequest.self)
}
