import NordicDFUFrames
import Testing

@Suite struct FrameTests {
    @Test("Secure DFU requests encode as the bootloader expects and decode back")
    func secureRequests() throws {
        let cases: [(SecureDFURequest, [UInt8])] = [
            (.create(.command, size: 56), [0x01, 0x01, 0x38, 0x00, 0x00, 0x00]),
            (.create(.data, size: 4096), [0x01, 0x02, 0x00, 0x10, 0x00, 0x00]),
            (.setPRN(12), [0x02, 0x0C, 0x00]),
            (.calculateChecksum, [0x03]),
            (.execute, [0x04]),
            (.select(.data), [0x06, 0x02]),
            (.abort, [0x0C]),
            (.other(opcode: 0x09, parameters: [0x01]), [0x09, 0x01])
        ]
        for (request, bytes) in cases {
            #expect(request.bytes == bytes)
            #expect(try SecureDFURequest(bytes: bytes) == request)
        }
        #expect(throws: NordicDFUError.self) { try SecureDFURequest(bytes: [0x01, 0x02, 0x00]) }
        #expect(throws: NordicDFUError.self) { try SecureDFURequest(bytes: []) }
    }

    @Test("Secure DFU responses: select, checksum, success, errors with and without extended code")
    func secureResponses() throws {
        let select: [UInt8] = [0x60, 0x06, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x26, 0x39, 0xF4, 0xCB]
        #expect(try SecureDFUResponse(bytes: select) == .selected(maxSize: 4096, offset: 512, crc: 0xCBF4_3926))
        #expect(SecureDFUResponse.selected(maxSize: 4096, offset: 512, crc: 0xCBF4_3926).bytes == select)
        #expect(
            try SecureDFUResponse(bytes: [0x60, 0x03, 0x01, 0x38, 0, 0, 0, 1, 2, 3, 4])
                == .checksum(offset: 56, crc: 0x0403_0201))
        #expect(try SecureDFUResponse(bytes: [0x60, 0x04, 0x01]) == .success(opcode: 0x04))
        #expect(
            try SecureDFUResponse(bytes: [0x60, 0x04, 0x0B, 0x0C])
                == .failure(opcode: 0x04, result: 0x0B, extended: 0x0C))
        #expect(try SecureDFUResponse(bytes: [0x60, 0x01, 0x08]) == .failure(opcode: 0x01, result: 0x08, extended: nil))
        for bad: [UInt8] in [
            [], [0x60, 0x06], [0x20, 0x01, 0x01], [0x60, 0x06, 0x01, 0x00], [0x60, 0x04, 0x0B], [0x60, 0x04, 0x01, 0x00]
        ] {
            #expect(throws: NordicDFUError.self) { try SecureDFUResponse(bytes: bad) }
        }
    }

    @Test("Buttonless messages: enter, and the three-byte indication")
    func buttonless() throws {
        #expect(ButtonlessMessage.enterBootloader.bytes == [0x01])
        #expect(
            try ButtonlessMessage(bytes: [0x20, 0x01, 0x07])
                == .response(opcode: 1, result: ButtonlessMessage.notBonded))
        #expect(throws: NordicDFUError.self) { try ButtonlessMessage(bytes: [0x20, 0x01]) }
    }

    @Test("Legacy DFU requests, notifications and the image-size packet")
    func legacyFrames() throws {
        #expect(LegacyDFURequest.start(mode: 0x04).bytes == [0x01, 0x04])
        #expect(LegacyDFURequest.initParameters(complete: true).bytes == [0x02, 0x01])
        #expect(LegacyDFURequest.packetReceiptRequest(8).bytes == [0x08, 0x08, 0x00])
        #expect(try LegacyDFURequest(bytes: [0x08, 0x0A, 0x00]) == .packetReceiptRequest(10))
        #expect(throws: NordicDFUError.self) { try LegacyDFURequest(bytes: [0x08, 0x0A]) }
        #expect(try LegacyDFUNotification(bytes: [0x11, 0xA0, 0x00, 0x00, 0x00]) == .receipt(bytesReceived: 160))
        #expect(try LegacyDFUNotification(bytes: [0x10, 0x04, 0x05]) == .response(opcode: 4, status: 5))
        #expect(try LegacyDFUNotification(bytes: [0x10, 0x07, 0x01, 0x10, 0, 0, 0]) == .imageSize(16))
        #expect(throws: NordicDFUError.self) { try LegacyDFUNotification(bytes: [0x11, 0x01]) }
        let sizes = LegacyImageSizes(application: 0x1_2344)
        #expect(sizes.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 0x44, 0x23, 0x01, 0x00])
        #expect(try LegacyImageSizes(bytes: sizes.bytes) == sizes)
        #expect(throws: NordicDFUError.self) { try LegacyImageSizes(bytes: [0, 0, 0]) }
    }
}
