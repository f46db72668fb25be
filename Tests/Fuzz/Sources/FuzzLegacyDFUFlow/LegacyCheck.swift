import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

/// Watches one legacy DFU run: checks every write against the protocol's order and the
/// image, and builds the answers a board could give.
struct LegacyCheck {
    enum Pending { case none, entry, control(LegacyDFURequest) }
    /// What the next packet write must be.
    enum Expect: Equatable { case nothing, sizes, initPacket, firmware }

    let image: [UInt8]
    let sizes: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions

    var pending = Pending.none
    var answered = true
    var expect = Expect.nothing
    var sizesWritten = false
    var initWritten = false
    var cursor = 0
    /// The board reported the whole image received (`10 03 01`) / valid (`10 04 01`) since the last Start.
    var transferComplete = false
    var validated = false
    var delivered: LegacyDFUNotification?
    var firmwareBytes = 0
    var startWrites = 0
    var initAccepted = 0
    var packetsSinceAnswer = 0
    var lastAnswer: [UInt8]?

    init(image: [UInt8], options: NordicDFUOptions) {
        self.image = image
        sizes = LegacyImageSizes(application: UInt32(image.count)).bytes
        initPacket = LegacyInitPacket(application: image).bytes
        self.options = options
    }

    var packetBytes: Int { firmwareBytes + initAccepted * initPacket.count }

    mutating func deliver(_ event: FlowEvent) {
        delivered = nil
        switch event {
        case .disconnected:
            answered = true
            packetsSinceAnswer = 0
        case let .notification(ch, bytes) where ch == NordicGATT.legacyControlPoint:
            delivered = try? LegacyDFUNotification(bytes: bytes)
            guard case let .response(op, status)? = delivered, status == LegacyDFUStatus.success.rawValue else {
                return
            }
            if op == 0x03, expect == .firmware, cursor == image.count { transferComplete = true }
            if op == 0x04, transferComplete, case .control(.validate) = pending { validated = true }
        default: break
        }
    }

    mutating func observe(_ actions: [FlowAction], after event: FlowEvent) {
        for case let .write(ch, bytes, _) in actions {
            switch ch {
            case NordicGATT.legacyControlPoint: control(bytes, after: event)
            case NordicGATT.legacyPacket: packet(bytes)
            case NordicGATT.dfuControl:
                require(bytes == [0x01], "DFU control write \(bytes)")
                pending = .entry
                answered = false
            default: fatalError("a write to \(ch), which legacy DFU does not use")
            }
        }
    }

    private mutating func control(_ bytes: [UInt8], after event: FlowEvent) {
        guard let request = try? LegacyDFURequest(bytes: bytes), request.bytes == bytes else {
            fatalError("malformed control point write \(bytes)")
        }
        pending = .control(request)
        answered = false
        switch request {
        case .start(LegacyDFURequest.applicationMode):
            startWrites += 1
            expect = .sizes
            sizesWritten = false
            initWritten = false
            cursor = 0
            transferComplete = false
            validated = false
        case .initParameters(false):
            require(sizesWritten && expect == .nothing, "init parameters before the image sizes")
            expect = .initPacket
        case .initParameters(true):
            require(initWritten && expect == .nothing, "init parameters complete without the init packet")
        case let .packetReceiptRequest(n):
            require(initWritten && n == options.legacyPacketReceipts, "packet receipt request \(n)")
        case .receiveFirmware:
            require(initWritten && cursor == 0, "Receive firmware before the init packet, or after firmware")
            expect = .firmware
            initAccepted += 1
        case .validate:
            guard case .response(0x03, 0x01)? = delivered, transferComplete, cursor == image.count else {
                fatalError(
                    "Validate after \(String(describing: delivered)) with \(cursor) of \(image.count) bytes written")
            }
            expect = .nothing
        case .activateAndReset:
            require(validated, "Activate before the board validated the image")
        case .reset: expect = .nothing
        default: fatalError("control point write \(request)")
        }
    }

    private mutating func packet(_ bytes: [UInt8]) {
        switch expect {
        case .sizes:
            require(bytes == sizes, "image sizes \(bytes), expected \(sizes)")
            sizesWritten = true
            expect = .nothing
        case .initPacket:
            require(bytes == initPacket, "init packet \(bytes), expected \(initPacket)")
            initWritten = true
            expect = .nothing
        case .firmware:
            let end = cursor + bytes.count
            require(
                !bytes.isEmpty && bytes.count <= 20 && end <= image.count && image[cursor..<end].elementsEqual(bytes),
                "a firmware packet of \(bytes.count) bytes that is not the image at \(cursor)")
            cursor = end
            firmwareBytes += bytes.count
            packetsSinceAnswer += 1
        case .nothing:
            fatalError("a packet write \(bytes) where the protocol has none")
        }
    }
}
