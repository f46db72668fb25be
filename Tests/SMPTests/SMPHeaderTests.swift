import SMP
import Testing

@Suite("SMP header")
struct SMPHeaderTests {
    @Test func encodesFieldsBigEndianWithVersionAndOperationPacked() {
        let header = SMPHeader(
            version: .v2, operation: .write, length: 0x0102, group: SMPGroup(rawValue: 0x0304),
            sequence: 0xAB, command: 7)
        #expect(header.bytes == [0x0A, 0x00, 0x01, 0x02, 0x03, 0x04, 0xAB, 0x07])
        let v1 = SMPHeader(version: .v1, operation: .readResponse, length: 1, group: .image, sequence: 0, command: 0)
        #expect(v1.bytes == [0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00])
    }

    @Test func decodesWhatItEncodesForEveryOperationAndVersion() throws {
        for operation in SMPOperation.allCases {
            for version in [SMPVersion.v1, .v2] {
                let header = SMPHeader(
                    version: version, operation: operation, flags: 0, length: 65535,
                    group: .zephyrBasic, sequence: 200, command: 255)
                #expect(try SMPHeader(bytes: header.bytes) == header)
            }
        }
    }

    @Test func keepsReservedVersionsSoAServerCanRefuseThem() throws {
        let header = try SMPHeader(bytes: [0x12, 0, 0, 1, 0, 0, 9, 6])
        #expect(header.version.rawValue == 2)
        #expect(header.version != .v2)
        #expect(header.operation == .write)
    }

    @Test func rejectsShortHeader() {
        #expect(throws: SMPError.truncatedHeader(available: 5)) { try SMPHeader(bytes: [0x08, 0, 0, 1, 0]) }
    }

    @Test func rejectsUndefinedOperation() {
        #expect(throws: SMPError.self) { try SMPHeader(bytes: [0x0C, 0, 0, 1, 0, 0, 1, 0]) }
    }

    @Test func rejectsReservedBits() {
        #expect(throws: SMPError.self) { try SMPHeader(bytes: [0x28, 0, 0, 1, 0, 0, 1, 0]) }
    }

    @Test func answersReadWithReadResponseAndWriteWithWriteResponse() {
        #expect(SMPOperation.read.response == .readResponse)
        #expect(SMPOperation.write.response == .writeResponse)
        #expect(!SMPOperation.write.isResponse)
        #expect(SMPOperation.writeResponse.isResponse)
    }

    @Test func matchesTheDocumentedReferenceFrames() throws {
        // docs/protocols/mcumgr-smp.md §1.2: image state read, seq 1, and OS mcumgr params, seq 6.
        #expect(
            try SMPFrame(request: ImageStateReadRequest(), sequence: 1).encoded() == [0x08, 0, 0, 1, 0, 1, 1, 0, 0xA0])
        #expect(
            try SMPFrame(request: MCUmgrParametersRequest(), sequence: 6).encoded() == [0x08, 0, 0, 1, 0, 0, 6, 6, 0xA0]
        )
        #expect(try SMPFrame(request: ResetRequest(), sequence: 5).encoded() == [0x0A, 0, 0, 1, 0, 0, 5, 5, 0xA0])
    }
}
