import TestSupport
import CBOR
import SMP
import Testing

@Suite("SMP frames and typed messages")
struct SMPMessageTests {
    @Test func rejectsFrameWhoseLengthDisagreesWithPayload() {
        #expect(throws: SMPError.lengthMismatch(declared: 2, actual: 1)) {
            try SMPFrame(bytes: [0x08, 0, 0, 2, 0, 1, 1, 0, 0xA0])
        }
        #expect(throws: SMPError.lengthMismatch(declared: 1, actual: 2)) {
            try SMPFrame(bytes: [0x08, 0, 0, 1, 0, 1, 1, 0, 0xA0, 0xA0])
        }
    }

    @Test func rejectsFrameWithInvalidCBORPayload() {
        #expect(throws: SMPError.invalidPayload(.countExceedsInput(offset: 0, count: 1, available: 1))) {
            try SMPFrame(bytes: [0x08, 0, 0, 2, 0, 1, 1, 0, 0xA1, 0x61])
        }
    }

    @Test func refusesPayloadLargerThanTheLengthField() {
        let frame = SMPFrame(
            request: ImageUploadRequest(offset: 0, data: [UInt8](repeating: 0, count: 70_000)), sequence: 0)
        #expect(throws: SMPError.payloadTooLarge(70_000 + 16)) { try frame.encoded() }
    }

    @Test func answersWithSameGroupCommandSequenceAndClampedVersion() {
        let request = try? SMPHeader(bytes: [0x1A, 0, 0, 1, 0, 1, 0x42, 1])  // version 3, write
        guard let request else { Issue.record("header did not decode"); return }
        let answer = SMPFrame(error: .returnCode(.unsupportedTooNew), to: request)
        #expect(answer.header.version == .v2)
        #expect(answer.header.operation == .writeResponse)
        #expect(answer.header.sequence == 0x42)
        #expect(answer.header.group == .image && answer.header.command == 1)
    }

    @Test func throwsTheDevicesV1ReturnCode() throws {
        let frame = try SMPFrame(bytes: [0x03, 0, 0, 5, 0, 1, 12, 1, 0xA1, 0x62, 0x72, 0x63, 0x0A])
        #expect(throws: SMPError.returnCode(.busy, reason: nil)) { try frame.response(as: ImageUploadResponse.self) }
    }

    @Test func throwsTheDevicesV2GroupError() throws {
        let payload: CBOR = ["err": ["group": 1, "rc": 9]]
        let frame = SMPFrame(
            version: .v2, operation: .writeResponse, group: .image, command: 1, sequence: 3, payload: payload)
        #expect(throws: SMPError.groupError(.image(.noFreeSlot))) { try frame.response(as: ImageUploadResponse.self) }
    }

    @Test func treatsZeroCodesAsSuccess() throws {
        let payload: CBOR = ["off": 512, "rc": 0, "err": ["group": 1, "rc": 0]]
        let frame = SMPFrame(operation: .writeResponse, group: .image, command: 1, sequence: 0, payload: payload)
        #expect(try frame.response(as: ImageUploadResponse.self) == ImageUploadResponse(offset: 512))
    }

    @Test func keepsUnknownCodesNumberedAndNeverOK() throws {
        #expect(SMPReturnCode(rawValue: 300) == .unrecognized(300))
        #expect(SMPReturnCode(rawValue: 300).name == "MGMT_ERR_EPERUSER+44")
        #expect(SMPGroupError(group: 1, rc: 99) == .image(.unrecognized(99)))
        #expect(SMPGroupError(group: 1, rc: 34) == .image(.activeSlotNotKnown))
        #expect(SMPGroupError(group: 77, rc: 2) == .other(group: 77, rc: 2))
        let frame = SMPFrame(operation: .readResponse, group: .image, command: 0, sequence: 0, payload: ["rc": 200])
        #expect(throws: SMPError.returnCode(.unrecognized(200), reason: nil)) {
            try frame.response(as: ImageStateResponse.self)
        }
    }

    @Test func rejectsReturnCodeThatIsNotAnUnsignedInteger() {
        let frame = SMPFrame(operation: .readResponse, group: .os, command: 6, sequence: 0, payload: ["rc": -1])
        #expect(throws: SMPError.invalidField("rc", expected: "an unsigned 16-bit integer", in: "response")) {
            try frame.response(as: MCUmgrParametersResponse.self)
        }
    }

    @Test func namesErrorsInMessages() {
        #expect(
            SMPReturnCode.busy.description
                == "MGMT_ERR_EBUSY (10): the device is busy with another command; retry shortly")
        #expect(SMPGroupError.image(.imageAlreadyPending).name == "IMG_MGMT_ERR_IMAGE_ALREADY_PENDING")
        #expect(SMPGroupError.os(.queryYieldsNoAnswer).name == "OS_MGMT_ERR_QUERY_YIELDS_NO_ANSWER")
        #expect(SMPError.groupError(.image(.noFreeSlot)).description.contains("no free slot"))
    }

    @Test func mapsEveryImageErrorNumberToADistinctName() {
        let names = (0...34).map { SMPGroupError(group: 1, rc: UInt16($0)).name }
        #expect(Set(names).count == 35)
        #expect(names[23] == "IMG_MGMT_ERR_INVALID_IMAGE_HEADER_MAGIC")
        #expect(names[32] == "IMG_MGMT_ERR_IMAGE_CONFIRMATION_DENIED")
        #expect((0...34).allSatisfy { ImageManagementErrorCode(rawValue: UInt16($0)).rawValue == UInt16($0) })
    }

    @Test func translatesImageErrorsToLegacyCodesForV1Clients() {
        #expect(SMPGroupError.image(.noTLVs).legacyReturnCode == .noEntry)
        #expect(SMPGroupError.image(.imageAlreadyPending).legacyReturnCode == .badState)
        #expect(SMPGroupError.image(.noFreeMemory).legacyReturnCode == .noMemory)
        #expect(SMPGroupError.image(.invalidLength).legacyReturnCode == .invalidValue)
        #expect(SMPGroupError.image(.invalidImageHeaderMagic).legacyReturnCode == .unknown)
        #expect(SMPGroupError.image(.ok).legacyReturnCode == .ok)
        #expect(SMPGroupError.os(.rtcNotSet).legacyReturnCode == .unknown)
    }

    @Test func printsPayloadsInDiagnosticNotation() {
        let payload: CBOR = ["off": 0, "data": .byteString([0x01, 0xAB]), "sha": .null, "x": [1.5, -3, "a\"b"]]
        #expect(payload.description == #"{"off": 0, "data": h'01ab', "sha": null, "x": [1.5, -3, "a\"b"]}"#)
        #expect(CBOR.negative(.max).description == "-18446744073709551616")
        #expect(CBOR.float(2).description == "2.0")
    }

    @Test func refusesResponseForAnotherCommand() throws {
        let frame = SMPFrame(
            response: EchoResponse(text: "x"), to: SMPFrame(request: EchoRequest(text: "x"), sequence: 1).header)
        #expect(throws: SMPError.self) { try frame.response(as: ImageUploadResponse.self) }
        #expect(throws: SMPError.self) { try frame.request(as: EchoRequest.self) }
    }

    @Test func reportsMissingAndMistypedFields() {
        #expect(throws: SMPError.missingField("off", in: "image upload request")) {
            try ImageUploadRequest(payload: ["data": .byteString([])])
        }
        #expect(throws: SMPError.invalidField("off", expected: "an unsigned integer", in: "image upload request")) {
            try ImageUploadRequest(payload: ["off": -5, "data": .byteString([])])
        }
        #expect(throws: SMPError.invalidField("payload", expected: "a map", in: "image state response")) {
            try ImageStateResponse(payload: [1, 2])
        }
        #expect(throws: SMPError.missingField("version", in: "image state entry")) {
            try ImageStateResponse(payload: ["images": [["slot": 0]]])
        }
    }

    @Test func readsFrugalStateListWithMissingFlagsAsFalse() throws {
        let slot = try ImageSlotState(payload: ["slot": 1, "version": "0.0.1", "pending": true])
        #expect(slot == ImageSlotState(slot: 1, version: "0.0.1", hash: nil, pending: true))
    }

    @Test func acceptsBooleanForceInReset() throws {
        #expect(try ResetRequest(payload: ["force": true]).force)
        #expect(try !ResetRequest(payload: ["force": 0]).force)
        #expect(try ResetRequest(payload: ["boot_mode": 1]).bootMode == 1)
    }

    @Test func encodesBootloaderModeAnswer() throws {
        let answer = BootloaderInfoResponse(mode: 3, noDowngrade: true)
        #expect(hex(answer.payload.encoded()) == "a2646d6f6465036c6e6f2d646f776e6772616465f5")
        #expect(try BootloaderInfoResponse(payload: answer.payload) == answer)
        #expect(try BootloaderInfoResponse(payload: ["mode": -1]).mode == -1)
    }

    @Test func serverDecodesWhatClientEncodes() throws {
        let request = ImageUploadRequest.first(
            data: [1, 2, 3], imageLength: 3, sha: Array(repeating: 9, count: 32), image: 1)
        let wire = try SMPFrame(request: request, sequence: 77).encoded()
        let received = try SMPFrame(bytes: wire)
        #expect(try received.request(as: ImageUploadRequest.self) == request)
        let reply = try SMPFrame(response: ImageUploadResponse(offset: 3, match: true), to: received.header).encoded()
        #expect(
            try SMPFrame(bytes: reply).response(as: ImageUploadResponse.self)
                == ImageUploadResponse(offset: 3, match: true))
    }
}
