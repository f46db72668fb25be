import Testing
@testable import Laboratory

/// The report's table of modelled time over bound per configuration and link profile, and its chart by program size.
@Suite struct BenchBoundRatioTests {
    static func run(
        _ scenario: String, _ strategy: BenchStrategy, profile: String, modelled: Double, bound: Double,
        error: String? = nil
    ) -> BenchRun {
        var run = BenchRun(
            scenario: scenario, kind: .edit, board: "micro:bit V2", profile: profile,
            connectionIntervalMilliseconds: profile == "fast" ? 7.5 : 30, strategy: strategy, path: "full",
            reason: "forced", reasonMessage: "forced", modelledSeconds: modelled, boundSeconds: bound, boundNote: "",
            bytesOnAir: 0, payloadBytes: 0, transfers: 46, transferUnit: "objects", retries: 0,
            hostCPUMilliseconds: 0, error: error)
        run.ratio = bound > 0 ? modelled / bound : 0
        return run
    }

    @Test func eachConfigurationShowsItsLeastAndLargestRatioPerProfileLeavingOutFailedAndUnboundRuns() {
        let report = BenchReport(
            runs: [
                Self.run("heart → counter", .nordic, profile: "linux-default", modelled: 18.891, bound: 18.280),
                Self.run("heart → huge", .nordic, profile: "linux-default", modelled: 27.891, bound: 27.280),
                Self.run("heart → counter", .nordic, profile: "fast", modelled: 13.303, bound: 12.273),
                Self.run("heart → large", .nordic, profile: "fast", modelled: 1, bound: 1, error: "link lost"),
                Self.run("heart → counter", .fullBest, profile: "fast", modelled: 20.652, bound: 20.518),
                Self.run("heart again", .auto, profile: "fast", modelled: 1.091, bound: 0)
            ], notes: [])
        let cells = BenchTable.boundRatioCells(report)
        #expect(cells[0] == ["configuration, board", "linux-default", "fast"])
        #expect(cells[1] == ["full (Nordic DFU), micro:bit V2", "1.022–1.033 (2)", "1.084 (1)"])
        #expect(cells[2] == ["full (bitflash), micro:bit V2", "-", "1.007 (1)"])
        #expect(cells.count == 3)
    }

    @Test func secureDFURowsAreHeldToTheirGoalAndLegacyDFURowsToNone() {
        let within = Self.run("heart → counter", .nordic, profile: "fast", modelled: 13.303, bound: 12.273)
        let over = Self.run("heart → large", .nordic, profile: "fast", modelled: 15.0, bound: 12.0)
        var legacy = Self.run("V1 heart → counter", .nordic, profile: "fast", modelled: 26.0, bound: 13.6)
        legacy.transferUnit = "packets"
        let report = BenchReport(runs: [within, over, legacy], notes: [])
        #expect(BenchReport.goal(of: within) == BenchReport.secureDFUGoal && BenchReport.goal(of: legacy) == nil)
        #expect(report.rowsMissingTheirGoal.map(\.scenario) == ["heart → large"])
        #expect(BenchTable.goalSummary(report).contains("Secure DFU rows ≤ 1.2 × bound: 1 missed"))
    }

    @Test func theSizeChartPlacesEveryConfigurationAtTheProgramSizePartialFlashingWrites() {
        var small = Self.run("heart → counter", .partialOnly, profile: "fast", modelled: 5.993, bound: 5.976)
        small.payloadBytes = 8_320
        var big = Self.run("heart → huge", .partialOnly, profile: "fast", modelled: 60.1, bound: 59.9)
        big.payloadBytes = 131_200
        let report = BenchReport(
            runs: [
                big, Self.run("heart → huge", .nordic, profile: "fast", modelled: 18.928, bound: 17.672),
                small, Self.run("heart → counter", .nordic, profile: "fast", modelled: 13.303, bound: 12.273),
                Self.run("runtime r1 → r2", .nordic, profile: "fast", modelled: 14.0, bound: 13.0)
            ], notes: [])
        let points = BenchSizeChart.points(report)["fast"]
        #expect(points?[.partialOnly]?["micro:bit V2"]?.map(\.bytes) == [8_320, 131_200])
        #expect(points?[.nordic]?["micro:bit V2"]?.map(\.seconds) == [13.303, 18.928])
        #expect(BenchSizeChart.render(report).contains("<polyline"))
    }
}
