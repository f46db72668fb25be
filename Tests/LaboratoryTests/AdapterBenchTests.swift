import LinkModel
import Testing
@testable import Laboratory

/// The adapter benchmark: a class over one and two adapters against its bounds.
@Suite struct AdapterBenchTests {
    @Test func aClassOverTwoAdaptersIsVerifiedFasterAndNeverBeatsItsBounds() {
        let rows = AdapterBench.run(
            boards: 8, adapterCounts: [1, 2], adapter: .csr8510, profiles: [.deviceRequested])
        #expect(rows.count == 2)
        for row in rows {
            #expect(row.error == nil, "\(row.error ?? "")")
            #expect(row.verified == 8)
            #expect(row.modelledSeconds >= row.boundSeconds, "no class can beat the model's own bounds")
            #expect(row.busiestRadioSeconds <= row.modelledSeconds)
        }
        // 8 boards at 5 per adapter: two waves on one adapter, one wave on two.
        #expect(rows[0].waveBoundSeconds == 2 * rows[0].oneBoardBoundSeconds)
        #expect(rows[1].waveBoundSeconds == rows[1].oneBoardBoundSeconds)
        #expect(rows[1].modelledSeconds < rows[0].modelledSeconds * 0.7)
    }
}
