import Foundation
import PartialFlashingFrames
import Testing
import Transport

/// The resume point as the drivers keep it: a JSON record per board, and the checkpoint value a
/// partial flash reports through the base layer.
@Suite struct ResumePointRecordTests {
    /// A point as a flash of a program region of 0x47000-0x48420 (MakeCode 8.0.18's small heart on
    /// a V2; 81 blocks of 64 bytes) leaves it after its first page: block 64, at 0x48000, opens the
    /// second page. The hashes stand for any.
    static let point = ResumePoint(
        programHash: "6c1e2e0b8a7d4f10", runtimeHash: "a5d3c1f7e9b20486", regionStart: 0x47000,
        regionEnd: 0x48420, hashWhileWriting: "ffffffffffffffff", blockCount: 81, block: 64,
        address: 0x48000, acknowledged: 70, board: "BBC micro:bit [zotig]")

    @Test("a resume point read back from its JSON record is the point that was saved")
    func theRecordRoundTrips() throws {
        let data = try JSONEncoder().encode(Self.point)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["version"] as? Int == ResumePoint.currentVersion)
        #expect(object["block"] as? Int == 64)
        #expect(object["address"] as? Int == 0x48000)
        #expect(try JSONDecoder().decode(ResumePoint.self, from: data) == Self.point)
    }

    @Test("a resume point reported as a checkpoint comes back whole; another block is another checkpoint")
    func theCheckpointCarriesThePoint() {
        guard case let .checkpoint(carried?) = FlowReport.checkpoint(Self.point) else {
            Issue.record("not a checkpoint")
            return
        }
        #expect(carried.resumePoint == Self.point)
        var earlier = Self.point
        earlier.block = 0
        earlier.address = 0x47000
        #expect(FlowReport.checkpoint(earlier) != .checkpoint(Self.point))
        #expect(FlowReport.checkpoint(Self.point) == .checkpoint(AnyFlowCheckpoint(Self.point)))
    }
}
