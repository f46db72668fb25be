import Foundation
import Testing
import TestSupport

/// `--udp HOST:PORT`: host names resolve; a name that does not resolve, a port another program
/// holds and an address of another computer each get their own message and exit code.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct UDPEndpointTests {
    let dir: URL
    init() throws { dir = try BitflashBinary.temporaryDirectory() }

    /// `sim serve --udp 127.0.0.1:0` on a state folder of its own, and the port it bound.
    func serve(_ name: String, _ extra: [String] = []) async throws -> (ExternalProcess, Int) {
        let bitflash = try #require(BitflashBinary.labURL)
        let server = try ExternalProcess(
            bitflash,
            [
                "sim", "serve", "--udp", "127.0.0.1:0", "--time-scale", "0",
                "--sim-state", dir.appendingPathComponent(name).path
            ] + extra)
        let ready = await server.wait(upTo: .seconds(60)) {
            $0.stdout.contains("serving SMP over UDP on") || !$0.isRunning
        }
        try #require(ready && server.isRunning, "\(server.stdout) \(server.stderr)")
        let line = try #require(
            server.stdout.split(separator: "\n").first { $0.contains("serving SMP over UDP on 127.0.0.1:") })
        let port = try #require(Int(line.split(separator: " ")[5].split(separator: ":")[1]))
        return (server, port)
    }

    @Test("flash --udp resolves host names: localhost:PORT reaches the server")
    func localhostResolves() async throws {
        let (server, port) = try await serve("named")
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--udp", "localhost:\(port)", "--json"
        ])
        #expect(await server.stop(within: .seconds(10)) == 0)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("\"verified\":true"), "\(r.stdout)")
    }

    @Test("flash --udp with a host name that does not resolve: 69, said as such, with no advice to serve there")
    func unknownHostIs69() throws {
        let r = try BitflashBinary.run([
            "flash", BitflashBinary.sample("sample-r2-heart.hex").path, "--udp", "no-such-host.invalid:1337"
        ])
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("the host name 'no-such-host.invalid' does not resolve"), "\(r.stderr)")
        #expect(!r.stderr.contains("is not HOST:PORT") && !r.stderr.contains("sim serve"), "\(r.stderr)")
    }

    @Test("sim serve on a port another program holds: 75, naming the port; never 73")
    func portInUseIs75() async throws {
        let (first, port) = try await serve("first")
        let second = try BitflashBinary.lab([
            "sim", "serve", "--udp", "127.0.0.1:\(port)", "--for", "1",
            "--sim-state", dir.appendingPathComponent("second").path
        ])
        #expect(await first.stop(within: .seconds(10)) == 0)
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("UDP port \(port) is in use by another program"), "\(second.stderr)")
    }

    @Test(
        "sim serve where it cannot listen: a name that does not resolve or another computer's address is a bad command line"
    )
    func unusableListenAddressIs64() throws {
        for (endpoint, words) in [
            ("no-such-host.invalid:0", "does not resolve"),
            ("192.0.2.1:0", "192.0.2.1 is not an address of this computer")
        ] {
            let r = try BitflashBinary.lab(["sim", "serve", "--udp", endpoint, "--for", "1", "--sim-state", dir.path])
            #expect(r.status == 64, "\(endpoint): \(r.stderr)")
            #expect(r.stderr.contains("cannot listen on") && r.stderr.contains(words), "\(endpoint): \(r.stderr)")
        }
    }
}
