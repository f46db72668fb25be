import Foundation
import Testing
import TestSupport

/// A board that cannot be connected is a board not found (69), not a flash that failed (74):
/// nothing was sent to it. docs/json-and-exit-codes.md: "69 board not found or not connectable".
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct UnreachableBoardTests {
    static func result(_ r: BitflashBinary.Result) throws -> [String: Any] {
        let objects = r.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return try #require(objects.last { $0["type"] as? String == "result" }, "\(r.stdout)")
    }

    @Test("a board whose program keeps Bluetooth off, in application mode: 69, says to use pairing mode, sends nothing")
    func aBoardWithoutBluetoothIsNotConnectable() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let reset = try BitflashBinary.run(["sim", "reset", "--no-app-bluetooth", "--sim-state", state.path])
        #expect(reset.status == 0, "\(reset.stderr)")
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.run(["flash", file, "--simulate", "--sim-state", state.path, "--json"])
        #expect(r.status == 69, "\(r.stdout)\n\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["verification"] as? String == "failed")
        #expect(result["bytesSent"] as? Int == 0, "\(result)")
        #expect(result["path"] == nil || result["path"] is NSNull, "\(result)")
        #expect((result["error"] as? String)?.contains("pairing mode") == true, "\(result)")
        // The plain output says the same, with the same status.
        let plain = try BitflashBinary.run(["flash", file, "--simulate", "--sim-state", state.path])
        #expect(plain.status == 69, "\(plain.stdout)\n\(plain.stderr)")
    }

    @Test("one board of three cannot be connected: the run exits 69 and the others are flashed")
    func oneUnreachableBoardOfAClassExits69() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let reset = try BitflashBinary.run([
            "sim", "reset", "--boards", "3", "--sim-state", state.path
        ])
        #expect(reset.status == 0, "\(reset.stderr)")
        // sim-2 runs a program that keeps Bluetooth off (its file, rewritten as `sim reset` writes it).
        let single = try BitflashBinary.temporaryDirectory()
        let off = try BitflashBinary.run(["sim", "reset", "--no-app-bluetooth", "--sim-state", single.path])
        #expect(off.status == 0, "\(off.stderr)")
        let board = try Data(contentsOf: single.appendingPathComponent("sim.json"))
        try board.write(to: state.appendingPathComponent("sim-2.json"))
        let r = try BitflashBinary.run([
            "flash", file, "--simulate", "--boards", "3", "--sim-state", state.path, "--json"
        ])
        #expect(r.status == 69, "\(r.stdout)\n\(r.stderr)")
        let objects = r.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let results = objects.filter { $0["type"] as? String == "result" }
        #expect(results.count == 3)
        let verified = results.filter { $0["verification"] as? String == "verified" }.compactMap {
            $0["board"] as? String
        }
        #expect(Set(verified) == ["sim-1", "sim-3"], "\(results)")
    }
}
