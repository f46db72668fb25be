import CBOR
import FirmwareImage
import Flashing
import McuMgr
import SMP
import Transport
import FuzzEvents

/// The image being uploaded: an unsigned MCUboot image (32-byte header, 660 bytes of
/// application, the SHA-256 TLV), so an upload takes several chunks at the smallest MTU. It
/// must pass the upgrade's own image check, or every input ends at `start` and nothing past
/// it is fuzzed.
let upgradeImage: McuMgrUpgradeImage = {
    let application: [UInt8] = (0..<660).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    let bytes = try! MCUbootImage.build(application: application, version: MCUbootVersion(major: 1), headerSize: 32)
    let image = FlashPlan.upgradeImage(try! MCUbootImage(bytes: bytes))
    if let problem = image.problem(slot: nil) {
        fatalError("the harness's image fails the upgrade's check: \(problem)")
    }
    return image
}()
let imageBytes = upgradeImage.bytes
let imageHash = upgradeImage.hash
let otherHash: [UInt8] = (0..<32).map { UInt8($0 &* 5 &+ 3) }
let knownTimers = [TimerID("request"), TimerID("busy"), TimerID("reset"), TimerID("stranger")]

/// libFuzzer entry point: the input is a script of link events for `McuMgrUpgrade`.
///
/// Each step takes one byte: its low 3 bits pick the event (raw notification bytes, an
/// SMP answer (variant, choice, cut bytes) built for the oldest unanswered request and bent by the input (wrong
/// sequence, error `rc`, huge or truncated length, random CBOR, split across
/// notifications), a timer firing, a disconnect, connected, connect failed, a write
/// failure, or time passing). After every step the harness checks:
/// * everything the flow writes reassembles into well-formed SMP frames;
/// * every upload chunk lies inside the image and carries the image's bytes; the first
///   chunk (offset 0) declares the image length;
/// * `finish` comes once and last; after the script, a driver that only fires timers and
///   fails reconnections ends the flow within 2,000 events (no livelock).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMcuMgrFlow(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var source = ByteSource(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    let setup = source.byte()
    var options = McuMgrUpgradeOptions(
        mode: McuMgrUpgradeMode.allCases[Int(setup) % McuMgrUpgradeMode.allCases.count],
        pipelineDepth: setup & 0x10 == 0 ? nil : Int(setup >> 5) + 1,
        useReassembly: setup & 0x08 == 0)
    options.traceBytes = 0
    var flow = McuMgrUpgrade(image: upgradeImage, options: options)
    let info = ConnectionInfo(services: [SMPGATT.service], mtu: 23 + Int(source.byte() % 4) * 60)
    var device = Device()
    var book = DriverBook()
    var actions = flow.handle(.start(info), now: book.now)
    book.record(actions)
    device.observe(actions)

    var steps = 0
    while !source.isAtEnd, !book.finished, steps < 4096 {
        steps += 1
        let op = source.byte()
        var events: [FlowEvent]
        switch op & 7 {
        case 0: events = [.notification(SMPGATT.characteristic, source.bytes(upTo: 40))]
        case 1: events = device.answer(&source).map { .notification(SMPGATT.characteristic, $0) }
        case 2: events = [.timerFired(book.takeTimer(source.byte(), known: knownTimers))]
        case 3:
            book.tookDisconnect()
            device.requests.reset()
            device.unanswered = []
            events = [.disconnected(op & 0x08 == 0 ? .remoteTerminated : .supervisionTimeout)]
        case 4:
            book.tookConnect()
            events = [.connected(op & 0x80 == 0 ? info : ConnectionInfo(services: [], mtu: 23))]
        case 5:
            book.tookConnect()
            events = [.connectFailed(.connectFailed("fuzz"))]
        case 6: events = [.writeFailed(SMPGATT.characteristic, .notConnected(operation: "write"))]
        default:
            book.advance(source.byte())
            events = []
        }
        for event in events where !book.finished {
            actions = flow.handle(event, now: book.now)
            book.record(actions)
            device.observe(actions)
        }
    }

    var drained = 0
    while !book.finished {
        guard let event = book.drainEvent() else {
            fatalError("the flow waits forever: no timer running, no link request, not finished")
        }
        drained += 1
        precondition(drained <= 2000, "the flow did not finish within 2000 timer firings / failed connects")
        actions = flow.handle(event, now: book.now)
        book.record(actions)
        device.observe(actions)
    }
    precondition(flow.outcome != nil, "finish without an outcome")
    return 0
}

/// The board side as far as the harness needs it: it reads the flow's requests and
/// builds answers a board could give, for the input to bend.
struct Device {
    var requests = SMPReassembler(maximumPayloadLength: 65_535, decoder: CBORDecoder())
    var unanswered: [SMPFrame] = []

    mutating func observe(_ actions: [FlowAction]) {
        for case let .write(characteristic, bytes, _) in actions where characteristic == SMPGATT.characteristic {
            let frames: [SMPFrame]
            do {
                frames = try requests.decode(bytes)
            } catch {
                fatalError("the flow wrote bytes that are not SMP frames: \(error)")
            }
            for frame in frames {
                check(frame)
                unanswered.append(frame)
            }
        }
        if unanswered.count > 64 { unanswered.removeFirst(unanswered.count - 64) }
    }

    private func check(_ frame: SMPFrame) {
        guard let upload = try? frame.request(as: ImageUploadRequest.self) else { return }
        let end = upload.offset + upload.data.count
        precondition(
            upload.offset >= 0 && end <= imageBytes.count,
            "upload chunk \(upload.offset)..<\(end) outside the \(imageBytes.count)-byte image")
        precondition(
            Array(imageBytes[upload.offset..<end]) == upload.data, "upload chunk at \(upload.offset) has other bytes")
        if upload.offset == 0 {
            precondition(upload.length == imageBytes.count, "first chunk without the image length")
        }
    }

    /// The notifications answering the oldest unanswered request, bent by the input.
    mutating func answer(_ source: inout ByteSource) -> [[UInt8]] {
        let variant = source.byte(), choice = source.byte()
        guard !unanswered.isEmpty else { return [source.bytes(upTo: 12)] }
        let request = unanswered.removeFirst()
        var payload = payload(for: request, choice: choice)
        if variant & 0x03 == 3 {
            payload =
                variant & 0x04 == 0
                ? SMPErrorResponse.returnCode(SMPReturnCode(rawValue: UInt16(source.byte() % 12))).payload
                : SMPErrorResponse.group(SMPGroupError(group: 1, rc: UInt16(source.byte() % 10))).payload
        }
        var header = request.header
        if variant & 0x08 != 0 { header.sequence &+= 1 + source.byte() % 3 }
        var bytes =
            (try? SMPFrame(
                response: Raw(payload: payload, group: header.group, command: header.command),
                to: header
            ).encoded()) ?? []
        switch variant >> 4 {
        case 1 where bytes.count > 8: bytes.removeLast(Int(source.byte()) % (bytes.count - 8) + 1)  // truncated
        case 2 where bytes.count > 3: bytes[2] = 0xFF; bytes[3] = source.byte()  // huge length
        case 3 where bytes.count > 8: bytes.replaceSubrange(8..., with: source.bytes(upTo: 16))  // random CBOR
        default: break
        }
        // Split into notifications of a size taken from the input.
        let cut = Int(source.byte() % 64) + 1
        return stride(from: 0, to: bytes.count, by: cut).map { Array(bytes[$0..<min(bytes.count, $0 + cut)]) }
    }

    private func payload(for request: SMPFrame, choice: UInt8) -> CBOR {
        let group = request.header.group, command = request.header.command
        if group == .os, command == 6 {
            let sizes = [64, 256, 2475, 40]
            return MCUmgrParametersResponse(bufferSize: sizes[Int(choice) % 4], bufferCount: Int(choice >> 2) % 4 + 1)
                .payload
        }
        if group == .os, command == 5 { return ResetResponse().payload }
        if group == .image, command == 1, let upload = try? request.request(as: ImageUploadRequest.self) {
            let offset: Int? =
                switch choice & 3 {
                case 0, 1: upload.offset + upload.data.count
                case 2: 0
                default: nil
                }
            return ImageUploadResponse(offset: offset).payload
        }
        if group == .image, command == 0 {
            let slotSets: [[ImageSlotState]] = [
                [
                    ImageSlotState(
                        slot: 0, version: "1.0.0", hash: otherHash, bootable: true, confirmed: true, active: true)
                ],
                [
                    ImageSlotState(
                        slot: 0, version: "1.0.0", hash: otherHash, bootable: true, confirmed: true, active: true),
                    ImageSlotState(slot: 1, version: "2.0.0", hash: imageHash, bootable: true, pending: true)
                ],
                [
                    ImageSlotState(slot: 0, version: "2.0.0", hash: imageHash, bootable: true, active: true),
                    ImageSlotState(slot: 1, version: "1.0.0", hash: otherHash, bootable: true, confirmed: true)
                ],
                [
                    ImageSlotState(
                        slot: 0, version: "2.0.0", hash: imageHash, bootable: true, confirmed: true, active: true)
                ]
            ]
            return ImageStateResponse(images: slotSets[Int(choice) % 4]).payload
        }
        return [:]
    }
}

/// A response with any payload, for any group and command.
struct Raw: SMPResponse {
    static let group = SMPGroup.os
    static let command: UInt8 = 0
    static let name = "raw"
    var payload: CBOR
    init(payload: CBOR, group: SMPGroup, command: UInt8) { self.payload = payload }
    init(payload: CBOR) throws(SMPError) { self.payload = payload }
}
