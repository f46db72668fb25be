/// The checks every request to the class page passes before it reaches a route: its `Host`, its
/// `Origin` and the secret token of this start. Pure: a request's three values in, a verdict out.
///
/// - The `Host` header must name the address and port the server listens on (`127.0.0.1:8000`,
///   or `localhost:8000` on the loopback address). A page on another site that has its own name
///   resolve to 127.0.0.1 (DNS rebinding) sends its own name as the host and is refused.
/// - An `Origin` header, when the browser sends one (on every POST, and on the event stream of a
///   script), must be the page's own origin: a page on another site cannot drive the flasher.
/// - The token, made afresh at each start and printed in the URL, must come with every request:
///   as `token` in the query, or in the `X-Bitflash-Token` header. Another local user or program
///   that does not have the printed URL gets nothing.
public struct RequestGuard: Sendable, Equatable {
    /// Why a request is refused, in words a person who opened a wrong link can act on.
    public enum Verdict: Sendable, Equatable {
        case allow
        /// HTTP 403 with this reason.
        case refuse(String)
    }

    /// The secret of this start.
    public let token: String
    /// The `host:port` forms this server answers to, lowercased.
    public let hosts: Set<String>

    /// - Parameters:
    ///   - address: the address the server listens on (`127.0.0.1`, `::1`, `192.168.1.20`).
    ///   - port: the port it listens on.
    public init(token: String, address: String, port: Int) {
        self.token = token
        var names = [address.contains(":") ? "[\(address)]" : address]
        if Self.isLoopback(address) { names += ["localhost", "127.0.0.1", "[::1]"] }
        hosts = Set(names.map { "\($0.lowercased()):\(port)" })
    }

    /// Whether `address` is a loopback address (reachable from this computer only).
    public static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address == "localhost" || address.hasPrefix("127.")
    }

    /// The origin the page is served from (`http://127.0.0.1:8000`), for the printed URL.
    public func origin(of host: String) -> String { "http://\(host)" }

    /// The verdict on a request with these headers (nil: absent) and this token (from the query
    /// or the header; nil: none).
    public func check(host: String?, origin: String?, token given: String?) -> Verdict {
        guard let host, hosts.contains(host.lowercased()) else {
            return .refuse(
                "this page answers only to \(hosts.sorted().joined(separator: " or ")), not to "
                    + "\(host.map { "'\($0)'" } ?? "a request without a Host"): open the URL bitflash serve printed")
        }
        if let origin {
            let lowered = origin.lowercased()
            guard lowered.hasPrefix("http://"), hosts.contains(String(lowered.dropFirst("http://".count))) else {
                return .refuse(
                    "a page from \(origin) may not use this flasher: only the page bitflash serve printed may")
            }
        }
        guard let given, !given.isEmpty else {
            return .refuse("this page needs the token of its URL: open the URL bitflash serve printed")
        }
        guard Self.same(given, token) else {
            return .refuse(
                "the token is not this start's: bitflash serve makes a new one at each start; open the URL it printed")
        }
        return .allow
    }

    /// Compares in time that does not depend on where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = x.count ^ y.count
        for i in 0..<max(x.count, y.count) {
            difference |= Int((i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0))
        }
        return difference == 0
    }

    /// A new token: 128 bits from the system's random source, as 32 hexadecimal digits.
    public static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }
}
