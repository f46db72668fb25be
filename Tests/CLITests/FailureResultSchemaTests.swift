import Foundation
import Testing
import TestSupport

/// A failed flash ends with a result object that holds to docs/json-and-exit-codes.md: the path
/// it was on, whether it fell back, the retries, and the reason code with its details.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct FailureResultSchemaTests {
    /// Writes 40, 50, … 130 lost: partial flashing gives up, and so does what follows.
    static let drops = ["--sim-drop-at-write"] + stride(from: 40, through: 130, by: 10).map(String.init)

    static func result(_ r: BitflashBinary.Result) throws -> [String: Any] {
        let objects = r.lines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return try #require(objects.last { $0["type"] as? String == "result" }, "\(r.stdout)")
    }

    /// The fields every result has, with their types (the table "The result").
    static func checkSchema(_ result: [String: Any]) {
        #expect(result["board"] is String)
        #expect(result["fallback"] is Bool)
        #expect(result["bytesSent"] is Int)
        #expect(result["seconds"] is Double || result["seconds"] is Int)
        #expect(result["verified"] as? Bool == false)
        #expect(result["verification"] as? String == "failed")
        #expect(result["retries"] is Int)
        #expect((result["error"] as? String)?.isEmpty == false)
        let reason = result["reason"] as? [String: Any]
        #expect(reason?["code"] is String && reason?["message"] is String, "\(result)")
    }

    @Test(
        "partial flashing that gives up, then a full update that fails: partial-failed, fallback, path, bytes and retries"
    )
    func aFailedFallbackSaysWhereEachPartStopped() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.lab(["flash", file, "--simulate", "--sim-state", state.path, "--json"] + Self.drops)
        #expect(r.status == 74, "\(r.stderr)")
        let retried = r.lines.filter { $0.contains("\"type\":\"retry\"") }.count
        #expect(retried > 0, "\(r.stdout)")
        let result = try Self.result(r)
        Self.checkSchema(result)
        #expect(result["path"] as? String == "full", "\(result)")
        #expect(result["fallback"] as? Bool == true, "\(result)")
        #expect(result["fullPath"] as? String == "mcumgr", "\(result)")
        #expect(result["retries"] as? Int == retried, "\(result)")
        #expect((result["bytesSent"] as? Int ?? 0) > 0, "\(result)")
        let reason = try #require(result["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "partial-failed", "\(reason)")
        let details = try #require(reason["details"] as? [String: Any], "\(reason)")
        #expect(details["lastError"] is String, "\(details)")
    }

    @Test("--mode partial that gives up: partial-failed with the block, address, retries and last error")
    func aFailedPartialFlashIsPartialFailed() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r1-counter.hex").path
        let r = try BitflashBinary.lab(
            ["flash", file, "--simulate", "microbit-v2", "--sim-state", state.path, "--json", "--mode", "partial"]
                + Self.drops)
        #expect(r.status == 74, "\(r.stderr)")
        let result = try Self.result(r)
        Self.checkSchema(result)
        #expect(result["path"] as? String == "partial", "\(result)")
        #expect(result["fallback"] as? Bool == false, "\(result)")
        let retried = r.lines.filter { $0.contains("\"type\":\"retry\"") }.count
        #expect(retried > 0 && result["retries"] as? Int == retried, "\(result)")
        #expect((result["bytesSent"] as? Int ?? 0) > 0, "\(result)")
        let reason = try #require(result["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "partial-failed", "\(reason)")
        let details = try #require(reason["details"] as? [String: Any], "\(reason)")
        #expect(details["lastError"] is String, "\(details)")
    }

    @Test("a full update by Nordic DFU keeps the reason's details: runtime-differs names both hashes")
    func aNordicFullUpdateKeepsTheReasonsDetails() throws {
        let state = try BitflashBinary.temporaryDirectory()
        let file = BitflashBinary.sample("sample-r2-heart.hex").path
        let r = try BitflashBinary.run(["flash", file, "--simulate", "microbit-v2", "--sim-state", state.path, "--json"]
        )
        #expect(r.status == 0, "\(r.stderr)")
        let result = try Self.result(r)
        #expect(result["fullPath"] as? String == "nordic", "\(result)")
        let reason = try #require(result["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "runtime-differs", "\(reason)")
        let details = try #require(reason["details"] as? [String: Any], "\(reason)")
        #expect(details["boardRuntimeHash"] is String && details["fileRuntimeHash"] is String, "\(details)")
    }
}
