import Testing
import FirmwareImage
import LinkModel
import TestSupport
import Flashing
@testable import Laboratory

/// The flash benchmark: partial against full on simulated boards, beside the lower bounds.
@Suite struct BenchmarkTests {
    /// A reduced set that stays quick: the samples' edit loops and, with the corpus, one real pair per family.
    static func quickScenarios() -> [BenchScenario] {
        var scenarios = BenchScenario.samples()
        if Corpus.isAvailable {
            let real = BenchScenario.corpus { try? Corpus.bytes($0) }
            scenarios += real.filter { $0.name.hasSuffix("small-heart → serial-counter") }
        }
        return scenarios
    }

    @Test func everyEditLoopTakesTheFasterPathAndBeatsTheReferenceFullUpdate() throws {
        if !Corpus.isAvailable { print(Corpus.skipMessage + " (corpus rows of the benchmark)") }
        let report = BenchRunner.runAll(Self.quickScenarios().filter { $0.kind == .edit }, profiles: [.deviceRequested])
        let edits = report.speedups
        #expect(!edits.isEmpty)
        for s in edits {
            // A huge program goes full (faster than partial flashing); every other edit goes partial.
            #expect(s.autoPath == (s.scenario.hasSuffix("huge") ? "full" : "partial"), "\(s.scenario)")
            #expect(s.autoWasFastest == true, "\(s.scenario)")
            #expect((s.overReference ?? 0) > 1, "\(s.scenario): \(String(describing: s.overReference))")
            if s.autoPath == "partial" {
                #expect((s.overBest ?? 0) > 1, "\(s.scenario): \(String(describing: s.overBest))")
            }
        }
        for run in report.runs {
            #expect(run.error == nil, "\(run.scenario) \(run.strategy): \(run.error ?? "")")
            #expect(run.ratio >= 1, "\(run.scenario) \(run.strategy) is below its bound: \(run.ratio)")
            print(
                String(
                    format: "%@ %@ %@: %.3f s, bound %.3f s, ratio %.4f, %d %@", run.scenario, run.profile,
                    run.strategy.rawValue, run.modelledSeconds, run.boundSeconds, run.ratio, run.transfers,
                    run.transferUnit))
        }
        #expect(
            report.rowsMissingTheirGoal.isEmpty,
            "\(report.rowsMissingTheirGoal.map { "\($0.scenario) \($0.strategy) \($0.ratio)" })")
    }

    @Test func onTheRealFilesPartialFlashingAndSecureDFUMeetTheirGoalsOnEveryLinkProfile() {
        // Every real MakeCode file of the corpus (the samples when it is absent), on the three
        // link profiles: partial flashing within 1.05 of its bound, short programs at 30 ms
        // included, and Secure DFU on the stock V2 and Calliope mini 3 within 1.2 of its own.
        if !Corpus.isAvailable { print(Corpus.skipMessage + " (the samples stand in for the real files)") }
        let scenarios = Corpus.isAvailable ? BenchScenario.corpus { try? Corpus.bytes($0) } : BenchScenario.samples()
        let wanted: Set<BenchStrategy> = [.auto, .partialOnly, .nordic]
        var runs: [BenchRun] = []
        for scenario in scenarios {
            for profile in LinkProfile.named {
                for strategy in BenchRunner.strategies(for: scenario.kind) where wanted.contains(strategy) {
                    runs.append(BenchRunner.run(scenario, profile: profile, strategy: strategy))
                }
            }
        }
        let report = BenchReport(runs: runs, notes: [])
        let secure = runs.filter(\.isSecureDFU)
        let partial = runs.filter { BenchReport.goal(of: $0) == BenchReport.partialGoal }
        #expect(Set(secure.map(\.profile)).count == 3 && Set(partial.map(\.profile)).count == 3)
        #expect(runs.allSatisfy { $0.error == nil && $0.retries == 0 })
        #expect(
            report.rowsMissingTheirGoal.isEmpty,
            "\(report.rowsMissingTheirGoal.map { "\($0.scenario) \($0.profile) \($0.strategy) \($0.ratio)" })")
        for (name, rows) in [("partial", partial), ("Secure DFU", secure)] {
            let ratios = rows.map(\.ratio)
            print(
                String(
                    format: "%@: %d runs, %.3f to %.3f times the bound", name, rows.count, ratios.min() ?? 0,
                    ratios.max() ?? 0))
        }
    }

    @Test func twoRunsGiveIdenticalModelledFigures() {
        let scenarios = BenchScenario.samples(boards: [.microbitV2])
        let profiles = [LinkProfile.fast, .linuxDefault]
        func modelled(_ r: BenchReport) -> [BenchRun] {
            r.runs.map {
                var run = $0; run.hostCPUMilliseconds = 0; return run
            }
        }
        let first = BenchRunner.runAll(scenarios, profiles: profiles)
        let second = BenchRunner.runAll(scenarios, profiles: profiles)
        #expect(modelled(first) == modelled(second))
        #expect(
            first.runs.count == scenarios.map { BenchRunner.strategies(for: $0.kind).count }.reduce(0, +)
                * profiles.count)
    }

    @Test(
        "Nordic DFU rows: a verified full update on a stock board, at or above its lower bound, slower than partial for a short edit"
    )
    func nordicRowsStandBesideTheOthers() {
        for board in [Board.microbitV2, .microbitV1] {
            let scenarios = BenchScenario.samples(boards: [board]).filter { $0.kind != .upToDate }
            for scenario in scenarios {
                let nordic = BenchRunner.run(scenario, profile: .deviceRequested, strategy: .nordic)
                #expect(nordic.error == nil, "\(scenario.name): \(nordic.error ?? "")")
                #expect(nordic.path == "full")
                #expect(nordic.ratio >= 1, "\(scenario.name) Nordic DFU below its bound: \(nordic.ratio)")
                #expect(nordic.transferUnit == (board == .microbitV2 ? "objects" : "packets"))
                // A short program's edit goes faster by partial flashing; a large one's can go
                // faster by Secure DFU paced by the flash queue (docs/nordic-dfu.md).
                if scenario.kind == .edit, scenario.name.hasSuffix("counter") {
                    let auto = BenchRunner.run(scenario, profile: .deviceRequested, strategy: .auto)
                    #expect(auto.modelledSeconds < nordic.modelledSeconds, "\(scenario.name)")
                }
                print(
                    String(
                        format: "%@ Nordic DFU: %.3f s, bound %.3f s, ratio %.3f", scenario.name,
                        nordic.modelledSeconds,
                        nordic.boundSeconds, nordic.ratio))
            }
        }
    }

    @Test func aNewRuntimeGoesFullAndSaysWhy() {
        let scenario = BenchScenario.samples(boards: [.microbitV2]).first { $0.kind == .newRuntime }!
        let run = BenchRunner.run(scenario, profile: .deviceRequested, strategy: .auto)
        #expect(run.path == "full")
        #expect(run.reason == "runtime-differs")
        #expect(run.ratio >= 1 && run.ratio <= BenchReport.fullGoal, "\(run.ratio)")
    }

    @Test func theSameFileAgainWritesNothing() {
        let scenario = BenchScenario.samples(boards: [.microbitV1]).first { $0.kind == .upToDate }!
        let run = BenchRunner.run(scenario, profile: .linuxDefault, strategy: .auto)
        #expect(run.path == "up-to-date")
        #expect(run.payloadBytes == 0)
        #expect(run.ratio >= 1 && run.ratio <= BenchReport.partialGoal, "\(run.ratio)")
    }

    @Test func anotherProgramKeepsTheRuntimeAndChangesTheProgramHash() throws {
        let scenario = BenchScenario.samples(boards: [.microbitV2])[0]
        let other = try #require(BenchScenario.otherProgram(scenario.update, board: .microbitV2))
        let a = try #require(MakeCodeProgram.find(in: scenario.update.image(for: .microbitV2), family: .nrf52833))
        let b = try #require(MakeCodeProgram.find(in: other.image(for: .microbitV2), family: .nrf52833))
        #expect(a.runtimeHash == b.runtimeHash)
        #expect(a.programHash != b.programHash)
        #expect(a.magicAddress == b.magicAddress)
    }
}
