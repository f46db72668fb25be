import ClassPage
import Testing

/// The class page's checks on every request, as pure functions: Host, Origin and the token.
@Suite struct RequestGuardTests {
    let token = "0123456789abcdef0123456789abcdef"
    var loopback: RequestGuard { RequestGuard(token: token, address: "127.0.0.1", port: 8123) }

    @Test func aRequestFromThePageWithItsTokenIsAllowed() {
        #expect(loopback.check(host: "127.0.0.1:8123", origin: "http://127.0.0.1:8123", token: token) == .allow)
        #expect(loopback.check(host: "localhost:8123", origin: nil, token: token) == .allow)
        #expect(loopback.check(host: "LOCALHOST:8123", origin: "http://localhost:8123", token: token) == .allow)
    }

    @Test func aForeignHostIsRefusedEvenWithTheToken() {
        // DNS rebinding: a site whose name resolves to 127.0.0.1 sends its own name as the Host.
        for host in ["evil.example:8123", "evil.example", "127.0.0.1:80", "127.0.0.1", "localhost.evil.example:8123"] {
            guard case let .refuse(reason) = loopback.check(host: host, origin: nil, token: token) else {
                Issue.record("\(host) was allowed")
                continue
            }
            #expect(reason.contains("127.0.0.1:8123"))
        }
        #expect(loopback.check(host: nil, origin: nil, token: token) != .allow)
    }

    @Test func anotherOriginIsRefusedEvenWithTheToken() {
        for origin in [
            "http://evil.example", "https://127.0.0.1:8123", "http://127.0.0.1:8124", "null",
            "http://127.0.0.1:8123.evil.example"
        ] {
            #expect(
                loopback.check(host: "127.0.0.1:8123", origin: origin, token: token) != .allow, "\(origin) was allowed")
        }
    }

    @Test func aMissingOrWrongTokenIsRefused() {
        #expect(loopback.check(host: "127.0.0.1:8123", origin: nil, token: nil) != .allow)
        #expect(loopback.check(host: "127.0.0.1:8123", origin: nil, token: "") != .allow)
        #expect(loopback.check(host: "127.0.0.1:8123", origin: nil, token: String(token.dropLast())) != .allow)
        #expect(loopback.check(host: "127.0.0.1:8123", origin: nil, token: token + "0") != .allow)
        #expect(loopback.check(host: "127.0.0.1:8123", origin: nil, token: "1" + token.dropFirst()) != .allow)
    }

    @Test func anotherAddressAnswersOnlyToItselfNotToLocalhost() {
        let lan = RequestGuard(token: token, address: "192.168.1.20", port: 8000)
        #expect(lan.check(host: "192.168.1.20:8000", origin: "http://192.168.1.20:8000", token: token) == .allow)
        #expect(lan.check(host: "localhost:8000", origin: nil, token: token) != .allow)
        let six = RequestGuard(token: token, address: "::1", port: 8000)
        #expect(six.check(host: "[::1]:8000", origin: "http://[::1]:8000", token: token) == .allow)
    }

    @Test func eachStartMakesANewTokenOf128Bits() {
        let tokens = (0..<20).map { _ in RequestGuard.makeToken() }
        #expect(Set(tokens).count == 20)
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }
}
