import Diagnostics

/// The one error type of SMP over UDP. Each message says what to do.
public enum SMPUDPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `HOST:PORT` could not be read.
    case badEndpoint(String)
    /// The host name did not resolve to an address (getaddrinfo's words in `detail`).
    case unknownHost(host: String, detail: String)
    /// The socket could not be opened or bound.
    case bindFailed(endpoint: String, reason: BindFailure)
    /// No SMP server answered the probe within the time allowed.
    case noAnswer(endpoint: String, after: Duration)
    /// The socket is closed.
    case closed

    public var description: String {
        switch self {
        case let .badEndpoint(text):
            return "'\(text)' is not HOST:PORT (for example 127.0.0.1:1337 or [::1]:1337)"
        case let .unknownHost(host, detail):
            return
                "the host name '\(host)' does not resolve (\(detail)): check the name, or give an address such as 127.0.0.1:1337"
        case let .bindFailed(endpoint, reason):
            return reason.message(endpoint)
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
            let port = Int(portText), (0...65535).contains(port)
        else { throw .badEndpoint(text) }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a UDP socket could not be bound, from the `errno` of `bind(2)`.
public enum BindFailure: Sendable, Equatable {
    /// EADDRINUSE: another socket holds the port.
    case inUse(port: Int)
    /// EADDRNOTAVAIL: the address is not one of this computer's.
    case notLocal(host: String)
    /// EACCES: a port below 1024 without the privilege to bind it.
    case notPermitted(port: Int)
    /// Anything else, in the system's words.
    case other(String)

    func message(_ endpoint: String) -> String {
        switch self {
        case let .inUse(port):
            return
                "cannot listen on \(endpoint): UDP port \(port) is in use by another program; stop it, or pick another port (0 takes any free port)"
        case let .notLocal(host):
            return
                "cannot listen on \(endpoint): \(host) is not an address of this computer; use one of its own, such as 127.0.0.1"
        case let .notPermitted(port):
            return
                "cannot listen on \(endpoint): port \(port) needs a privilege this user lacks; pick a port from 1024 up (0 takes any free port)"
        case let .other(message):
            return "cannot open a UDP socket on \(endpoint): \(message)"
        }
    }
}

extension SMPUDPError: DomainError {
    /// 64 for an endpoint that cannot be used as written, 69 for a board (server) that cannot be
    /// reached, 75 for a port another program holds (it may be free later).
    public var failureKind: FailureKind {
        switch self {
        case .badEndpoint: return .invalidRequest
        case .noAnswer, .unknownHost: return .boardUnavailable
        case let .bindFailed(_, reason):
            switch reason {
            case .inUse: return .heldElsewhere
            case .notLocal, .notPermitted: return .invalidRequest
            case .other: return .boardUnavailable
            }
        case .closed: return .flashFailed
        }
    }
}
