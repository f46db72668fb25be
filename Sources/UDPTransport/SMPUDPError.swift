import Diagnostics

/// The one error type of SMP over UDP. Each message says what to do.
public enum SMPUDPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `HOST:PORT` could not be read.
    case badEndpoint(String)
    /// The socket could not be opened or bound.
    case bindFailed(endpoint: String, message: String)
    /// No SMP server answered the probe within the time allowed.
    case noAnswer(endpoint: String, after: Duration)
    /// The socket is closed.
    case closed

    public var description: String {
        switch self {
        case let .badEndpoint(text):
            return "'\(text)' is not HOST:PORT (for example 127.0.0.1:1337 or [::1]:1337)"
        case let .bindFailed(endpoint, message):
            return "cannot open a UDP socket on \(endpoint): \(message); pick another port or free this one"
        case let .noAnswer(endpoint, after):
            return "no SMP server answered at \(endpoint) within \(after): start one or check the address and port"
        case .closed:
            return "the UDP socket is closed: open a new transport"
        }
    }
}

/// A UDP endpoint written as `HOST:PORT` (`[v6]:PORT` for IPv6 literals).
public struct UDPEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST:PORT`; port 0 is allowed (a server then takes any free port).
    public init(parsing text: String) throws(SMPUDPError) {
        var host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .badEndpoint(text) }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .badEndpoint(text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        host = host.drop(while: { $0 == " " })
        guard !host.isEmpty, !host.contains(":") || text.hasPrefix("["),
              let port = Int(portText), (0...65535).contains(port) else { throw .badEndpoint(text) }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension SMPUDPError: ExitStatusReporting {
    public var exitStatus: ExitStatus {
        switch self {
        case .badEndpoint: return .usage
        case .noAnswer: return .boardNotFound
        case .bindFailed, .closed: return .flashFailed
        }
    }
}
