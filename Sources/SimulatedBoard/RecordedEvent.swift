import Transport

/// A flow event as one line of text, so that a trace holds everything a flow was told and a
/// replay can tell it again (`TraceReplay`).
///
/// Forms: `start|connected mtu=N [ci=µs] services=UUID,UUID [name=NAME]`, `notification SERVICE CHAR HEX`,
/// `timer ID`, `disconnected remote|local|timeout|other TEXT`, `connect-failed TEXT`,
/// `write-failed SERVICE CHAR TEXT`. Transport errors keep only their words: a replay hands
/// them back as `TransportError.failed`.
public enum RecordedEvent {
    /// The line for `event`.
    public static func encode(_ event: FlowEvent) -> String {
        switch event {
        case let .start(info): return "start " + encode(info)
        case let .connected(info): return "connected " + encode(info)
        case let .notification(ch, bytes):
            return "notification \(ch.service.uuidString) \(ch.characteristic.uuidString) \(bytes.hexString)"
        case let .timerFired(id): return "timer \(id.name)"
        case let .disconnected(reason):
            switch reason {
            case .remoteTerminated: return "disconnected remote"
            case .localTerminated: return "disconnected local"
            case .supervisionTimeout: return "disconnected timeout"
            case let .other(text): return "disconnected other \(text)"
            }
        case let .connectFailed(error): return "connect-failed \(error)"
        case let .writeFailed(ch, error):
            return "write-failed \(ch.service.uuidString) \(ch.characteristic.uuidString) \(error)"
        }
    }

    private static func encode(_ info: ConnectionInfo) -> String {
        var s = "mtu=\(info.mtu)"
        if let ci = info.connectionInterval {
            let (sec, atto) = ci.components
            s += " ci=\(sec * 1_000_000 + atto / 1_000_000_000_000)"
        }
        s += " services=" + info.services.sorted().map(\.uuidString).joined(separator: ",")
        if let name = info.name { s += " name=\(name)" }
        return s
    }

    /// The event of a line written by `encode`, or nil when the line is not one.
    public static func decode(_ line: String) -> FlowEvent? {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard let head = parts.first else { return nil }
        let rest = parts.count > 1 ? parts[1] : ""
        func words(_ n: Int) -> [String] { rest.split(separator: " ", maxSplits: n - 1).map(String.init) }
        switch head {
        case "start": return info(rest).map(FlowEvent.start)
        case "connected": return info(rest).map(FlowEvent.connected)
        case "notification":
            let w = words(3)
            guard w.count == 3, let bytes = [UInt8](hexString: w[2]) else { return nil }
            return .notification(GATTCharacteristic(service: BLEUUID(w[0]), characteristic: BLEUUID(w[1])), bytes)
        case "timer":
            return rest.isEmpty ? nil : .timerFired(TimerID(rest))
        case "disconnected":
            switch rest {
            case "remote": return .disconnected(.remoteTerminated)
            case "local": return .disconnected(.localTerminated)
            case "timeout": return .disconnected(.supervisionTimeout)
            default:
                guard rest.hasPrefix("other ") else { return nil }
                return .disconnected(.other(String(rest.dropFirst(6))))
            }
        case "connect-failed": return .connectFailed(.connectFailed(rest))
        case "write-failed":
            let w = words(3)
            guard w.count == 3 else { return nil }
            return .writeFailed(
                GATTCharacteristic(service: BLEUUID(w[0]), characteristic: BLEUUID(w[1])),
                .failed(operation: "write", message: w[2]))
        default: return nil
        }
    }

    private static func info(_ text: String) -> ConnectionInfo? {
        var mtu: Int?
        var ci: Duration?
        var services: Set<BLEUUID> = []
        var name: String?
        var rest = Substring(text)
        while !rest.isEmpty {
            if rest.hasPrefix("name=") { name = String(rest.dropFirst(5)); break }
            let word = rest.prefix { $0 != " " }
            rest = rest.dropFirst(word.count).drop { $0 == " " }
            let kv = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard kv.count == 2 else { return nil }
            switch kv[0] {
            case "mtu": mtu = Int(kv[1])
            case "ci": ci = Int64(kv[1]).map { .microseconds($0) }
            case "services": services = Set(kv[1].split(separator: ",").map { BLEUUID(String($0)) })
            default: return nil
            }
        }
        guard let mtu else { return nil }
        return ConnectionInfo(services: services, mtu: mtu, name: name, connectionInterval: ci)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from upper- or lower-case hex digits without separators; nil when `text` is not that.
    init?(hexString text: String) {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var it = text.makeIterator()
        while let a = it.next(), let b = it.next() {
            guard let v = UInt8(String([a, b]), radix: 16) else { return nil }
            out.append(v)
        }
        self = out
    }
}
