import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

/// Watches one Secure DFU run: checks every write against the image and the answers the
/// board gave, and builds the answers a board could give (a simple model of what it holds).
struct SecureCheck {
    enum Pending { case none, buttonless(GATTCharacteristic), control(SecureDFURequest) }

    let image: [UInt8]
    let initPacket: [UInt8]
    let options: NordicDFUOptions

    var pending = Pending.none
    var answered = true
    /// The object type of the last Create or Select written.
    var phase: SecureDFUObjectType?
    /// Where the flow's packets of each type ended (command, data).
    var cursor = [0, 0]
    /// Offsets the board announced since the last packet of each type.
    var anchors: [Set<Int>] = [[], []]
    /// The object size the flow took from the last Select data answer it accepted.
    var maxObject = 4096
    var selectDataPending = false
    var pendingCreate: UInt32?
    var packetBytes = 0
    var dataBytes = 0
    /// Create data requests answered by packets, by the object's start; Create command requests.
    var createsAt: [Int: Int] = [:]
    var commandCreates = 0
    var packetsSinceAnswer = 0
    var initConfirmed = false
    var imageConfirmed = false
    var delivered: SecureDFUResponse?
    var lastAnswer: [UInt8]?
    /// The board model: bytes held of each type, and the end of the last executed data object.
    var held = [0, 0]
    var executedEnd = 0

    init(image: [UInt8], initPacket: [UInt8], options: NordicDFUOptions) {
        self.image = image
        self.initPacket = initPacket
        self.options = options
    }

    func reference(_ type: SecureDFUObjectType) -> [UInt8] { type == .command ? initPacket : image }
    func index(_ type: SecureDFUObjectType) -> Int { type == .command ? 0 : 1 }
    func crc(_ type: SecureDFUObjectType, _ n: Int) -> UInt32 {
        let ref = reference(type)
        return n >= 0 && n <= ref.count ? CRC32.checksum(ref[0..<n]) : 0
    }

    /// Books an event before the flow handles it.
    mutating func deliver(_ event: FlowEvent) {
        delivered = nil
        switch event {
        case .disconnected:
            selectDataPending = false
            answered = true
            packetsSinceAnswer = 0
        case let .notification(ch, bytes) where ch == NordicGATT.secureControlPoint:
            guard let r = try? SecureDFUResponse(bytes: bytes) else { return }
            delivered = r
            let offsetAndCRC: (Int, UInt32)? =
                switch r {
                case let .selected(_, off, crc), let .checksum(off, crc): (Int(off), crc)
                default: nil
                }
            if let (o, c) = offsetAndCRC {
                for type in phase.map({ [$0] }) ?? [.command, .data] { anchors[index(type)].insert(o) }
                if o == initPacket.count, c == crc(.command, o) { initConfirmed = true }
                if o == image.count, c == crc(.data, o) { imageConfirmed = true }
            }
            if selectDataPending, case let .selected(max, _, _) = r {
                selectDataPending = false
                if max >= 4, max % 4 == 0 { maxObject = Int(max) }
            }
        default: break
        }
    }

    /// Checks the actions the flow returned for `event`.
    mutating func observe(_ actions: [FlowAction], after event: FlowEvent) {
        for case let .write(ch, bytes, _) in actions {
            switch ch {
            case NordicGATT.secureControlPoint: control(bytes)
            case NordicGATT.securePacket: packet(bytes)
            case NordicGATT.buttonlessBonded, NordicGATT.buttonlessUnbonded:
                require(bytes == ButtonlessMessage.enterBootloader.bytes, "buttonless write \(bytes)")
                pending = .buttonless(ch)
                answered = false
            default: fatalError("a write to \(ch), which Secure DFU does not use")
            }
        }
    }

    private mutating func control(_ bytes: [UInt8]) {
        guard let request = try? SecureDFURequest(bytes: bytes) else {
            fatalError("malformed control point write \(bytes)")
        }
        pending = .control(request)
        answered = false
        selectDataPending = false
        pendingCreate = nil
        switch request {
        case let .create(type, size):
            guard let t = SecureDFUObjectType(rawValue: type) else { fatalError("Create of object type \(type)") }
            phase = t
            if t == .command {
                require(size == UInt32(initPacket.count), "Create command of \(size) bytes")
                commandCreates += 1
                held[0] = 0
            } else {
                pendingCreate = size
                held[1] = executedEnd
            }
        case let .select(type):
            guard let t = SecureDFUObjectType(rawValue: type) else { fatalError("Select of object type \(type)") }
            phase = t
            selectDataPending = t == .data
        case .execute:
            guard let phase else { fatalError("Execute before any object") }
            let confirmed: (Int, UInt32)? =
                switch delivered {
                case let .selected(_, off, c)?, let .checksum(off, c)?: (Int(off), c)
                default: nil
                }
            guard let (o, c) = confirmed, o > 0, c == crc(phase, o) else {
                fatalError("Execute (\(phase)) after \(String(describing: delivered)), not after a matching CRC")
            }
            if phase == .command {
                require(o == initPacket.count, "init command executed with \(o) of \(initPacket.count) bytes confirmed")
            } else {
                require(o == image.count || o % maxObject == 0, "data executed at \(o): not an object's end")
                executedEnd = held[1]
            }
        case .setPRN, .calculateChecksum: break
        case .abort, .other: fatalError("control point write \(request)")
        }
    }

    private mutating func packet(_ bytes: [UInt8]) {
        guard let phase else { fatalError("a packet before any Create or Select") }
        require(!bytes.isEmpty && bytes.count <= 244, "packet of \(bytes.count) bytes")
        let ref = reference(phase), i = index(phase)
        func at(_ p: Int) -> Bool {
            p >= 0 && p + bytes.count <= ref.count && ref[p..<(p + bytes.count)].elementsEqual(bytes)
        }
        var candidates = [cursor[i], 0] + anchors[i].sorted()
        if phase == .data { candidates += stride(from: 0, to: ref.count, by: maxObject) }
        guard let p = candidates.first(where: at) else {
            fatalError(
                "a \(phase) packet of \(bytes.count) bytes that is not the \(phase == .data ? "image" : "init command") at \(cursor[i]) or an announced offset"
            )
        }
        let end = p + bytes.count
        if phase == .data {
            require(
                p / maxObject == (end - 1) / maxObject, "packet \(p)..<\(end) crosses an object boundary (\(maxObject))"
            )
            if let size = pendingCreate {
                require(
                    p % maxObject == 0 && Int(size) == min(maxObject, image.count - p),
                    "Create data of \(size) bytes, then data from \(p) (objects of \(maxObject))")
                pendingCreate = nil
                createsAt[p, default: 0] += 1
            }
            dataBytes += bytes.count
        }
        cursor[i] = end
        anchors[i] = []
        held[i] = end
        packetBytes += bytes.count
        packetsSinceAnswer += 1
    }
}
