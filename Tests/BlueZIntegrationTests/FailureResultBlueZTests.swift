import Foundation
import Testing
import TestSupport

/// A flash over BlueZ that fails still says what it did, as the same session does on a
/// simulated board: the path and protocol it was on, whether it fell back, the payload bytes
/// it sent and the retries its stream announced (docs/json-and-exit-codes.md, "The result").
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct FailureResultBlueZTests {
    typealias C = BlueZCommandTests

    /// The JSON lines of a run, its result, and what its events counted: retries, and the most
    /// bytes a progress event of each phase counted (blocks of partial flashing as 64 bytes).
    static func read(_ r: Bitflash.Result) throws -> (result: [String: Any], retries: Int, bytes: Int) {
        let objects = try C.json(r)
        let result = try #require(objects.last { $0["type"] as? String == "result" }, "\(r.stdout)")
        let retries = objects.filter { $0["type"] as? String == "retry" }.count
        var bytes = 0
        var phase = 0
        for o in objects {
            switch o["type"] as? String {
            case "phase":
                bytes += phase
                phase = 0
            case "progress":
                let done = o["done"] as? Int ?? 0
                phase = max(phase, o["unit"] as? String == "bytes" ? done : done * 64)
            default: break
            }
        }
        return (result, retries, bytes + phase)
    }

    /// The fields every failed result has (the table "The result").
    static func checkFailure(_ result: [String: Any]) {
        #expect(result["verified"] as? Bool == false)
        #expect(result["verification"] as? String == "failed")
        #expect((result["error"] as? String)?.isEmpty == false)
        #expect(result["fallback"] is Bool && result["bytesSent"] is Int && result["retries"] is Int)
        let reason = result["reason"] as? [String: Any]
        #expect(reason?["code"] is String && reason?["message"] is String, "\(result)")
    }

    @Test("a full update whose slot hashes lie fails after the upload: full, mcumgr, its bytes and retries")
    func aFailedFullUpdateSaysWhatItSent() throws {
        let fake = try FakeBlueZProcess(["--firmware-hostile", "wrong-slot-hash"])
        let r = try fake.bitflash([
            "flash", C.sample("sample-r2-heart.hex").path, "--device", "zotig", "--json", "--mode", "full"
        ])
        #expect(r.status == 74, "\(r.stderr)")
        let (result, retries, bytes) = try Self.read(r)
        Self.checkFailure(result)
        #expect(result["path"] as? String == "full", "\(result)")
        #expect(result["fullPath"] as? String == "mcumgr", "\(result)")
        #expect(result["fallback"] as? Bool == false, "\(result)")
        #expect(bytes > 0 && result["bytesSent"] as? Int == bytes, "counted \(bytes): \(result)")
        #expect(result["retries"] as? Int == retries, "\(result)")
    }

    @Test("partial flashing gives up on a lying board, the full update that follows fails: partial-failed, fallback")
    func aFailedFallbackSaysWhereEachPartStopped() throws {
        let fake = try FakeBlueZProcess(["--firmware-hostile", "phantom-acks,wrong-slot-hash"])
        let r = try fake.bitflash(["flash", C.sample("sample-r1-counter.hex").path, "--device", "zotig", "--json"])
        #expect(r.status == 74, "\(r.stderr)")
        let (result, retries, bytes) = try Self.read(r)
        Self.checkFailure(result)
        #expect(result["path"] as? String == "full", "\(result)")
        #expect(result["fullPath"] as? String == "mcumgr", "\(result)")
        #expect(result["fallback"] as? Bool == true, "\(result)")
        // The program's blocks and then the image: both parts' bytes.
        #expect(bytes > 188_000 && result["bytesSent"] as? Int == bytes, "counted \(bytes): \(result)")
        #expect(result["retries"] as? Int == retries, "\(result)")
        let reason = try #require(result["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "partial-failed", "\(reason)")
        let details = try #require(reason["details"] as? [String: Any], "\(reason)")
        #expect(details["lastError"] is String, "\(details)")
    }
}
