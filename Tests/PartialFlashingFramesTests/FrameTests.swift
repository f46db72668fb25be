import PartialFlashingFrames
import Testing

@Suite struct FrameTests {
    @Test func encodesFlashDataWithBigEndianOffsetField() throws {
        let data = [UInt8](0..<16)
        let f = PartialFlashingRequest.flashData(offsetField: 0x4700, packetNumber: 9, data: data)
        #expect(f.bytes == [0x01, 0x47, 0x00, 0x09] + data)
        #expect(try PartialFlashingRequest(bytes: f.bytes) == f)
    }

    @Test func roundTripsEveryRequest() throws {
        for f: PartialFlashingRequest in [
            .regionInfo(2), .endOfTransmission, .status, .reset(.pairing), .reset(.application)
        ] {
            #expect(try PartialFlashingRequest(bytes: f.bytes) == f)
        }
    }

    @Test func decodesRegionInfoNotification() throws {
        let bytes: [UInt8] = [
            0x00, 0x02, 0x00, 0x04, 0x70, 0x00, 0x00, 0x07, 0x30, 0x00,
            0x22, 0x20, 0x4A, 0xC8, 0x74, 0x97, 0x7E, 0x7F
        ]
        let n = try PartialFlashingNotification(bytes: bytes)
        #expect(
            n
                == .regionInfo(
                    RegionInfo(
                        id: 2, start: 0x47000, end: 0x73000,
                        hash: [0x22, 0x20, 0x4A, 0xC8, 0x74, 0x97, 0x7E, 0x7F])))
        #expect(n.bytes == bytes)
    }

    @Test func rejectsTruncatedAndUnknownNotifications() {
        #expect(throws: FrameError.badLength(type: 0, expected: 18, got: 5)) {
            try PartialFlashingNotification(bytes: [0, 2, 0, 0, 0])
        }
        #expect(throws: FrameError.unknownType(0x42)) { try PartialFlashingNotification(bytes: [0x42]) }
        #expect(throws: FrameError.empty) { try PartialFlashingNotification(bytes: []) }
        #expect(throws: FrameError.badValue("write status 0x12")) { try PartialFlashingNotification(bytes: [1, 0x12]) }
    }

    @Test func decodesWriteStatusAndBoardStatus() throws {
        #expect(try PartialFlashingNotification(bytes: [0x01, 0xFF]) == .writeSuccess)
        #expect(try PartialFlashingNotification(bytes: [0x01, 0xAA]) == .writeFail)
        #expect(try PartialFlashingNotification(bytes: [0xEE, 0x01, 0x00]) == .status(version: 1, mode: .pairing))
    }
}
