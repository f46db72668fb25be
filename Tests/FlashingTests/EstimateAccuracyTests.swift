import Laboratory
import Testing
import TestSupport
import FirmwareImage
import LinkModel
import NordicDFU
@testable import Flashing

/// The estimators against the simulator's modelled time (deterministic virtual time: these
/// are not timed assertions).
@Suite struct EstimateAccuracyTests {
    @Test(arguments: LinkProfile.named)
    func everyBenchmarkRowIsEstimatedWithinTenPercent(profile: LinkProfile) {
        let report = BenchRunner.runAll(BenchScenario.samples(), profiles: [profile])
        var estimated = 0
        for run in report.runs {
            #expect(run.error == nil, "\(run.scenario) \(run.strategy): \(run.error ?? "")")
            guard run.path != "up-to-date" else { continue }
            guard let error = run.estimateError else {
                Issue.record("\(run.scenario) \(run.strategy) has no estimate")
                continue
            }
            estimated += 1
            #expect(
                abs(error) <= 0.10,
                "\(run.scenario) \(run.profile) \(run.strategy): estimate \(run.estimatedSeconds ?? 0) s, modelled \(run.modelledSeconds) s"
            )
        }
        #expect(estimated >= 20)
    }

    @Test(arguments: LinkProfile.named)
    func autoTakesTheFasterPathInEveryScenarioWithTwoPaths(profile: LinkProfile) {
        let report = BenchRunner.runAll(BenchScenario.samples().filter { $0.kind == .edit }, profiles: [profile])
        #expect(!report.speedups.isEmpty)
        for s in report.speedups {
            #expect(s.autoWasFastest == true, "\(s.scenario) \(s.profile): auto took \(s.autoPath ?? "-")")
        }
        // The huge program goes full on every profile although partial flashing was possible.
        #expect(report.runs.contains { $0.strategy == .auto && $0.fullOverPartial && $0.scenario.hasSuffix("huge") })
    }

    @Test(arguments: LinkProfile.named)
    func theRealMakeCodeFilesAreEstimatedWithinTenPercentAndAutoIsFaster(profile: LinkProfile) throws {
        guard Corpus.isAvailable else {
            print(Corpus.skipMessage + " (estimates of the real MakeCode files)")
            return
        }
        let report = BenchRunner.runAll(BenchScenario.corpus { try? Corpus.bytes($0) }, profiles: [profile])
        let estimated = report.runs.filter { $0.estimateError != nil }
        #expect(estimated.count >= 40, "the corpus gave \(estimated.count) estimated rows")
        #expect(estimated.contains { $0.strategy == .nordic }, "Nordic DFU rows are estimated too")
        for run in report.runs {
            #expect(run.error == nil, "\(run.scenario) \(run.strategy): \(run.error ?? "")")
            guard let error = run.estimateError else { continue }
            #expect(
                abs(error) <= 0.10,
                "\(run.scenario) \(run.strategy): estimate \(run.estimatedSeconds ?? 0) s, modelled \(run.modelledSeconds) s"
            )
        }
        for s in report.speedups where s.autoWasFastest != nil {
            #expect(s.autoWasFastest == true, "\(s.scenario): auto took \(s.autoPath ?? "-")")
        }
    }

    @Test func thePipelinedUploadIsStepOnTheLinkModel() {
        // 20 frames of 11 packets, 6 packets per event, 20 ms of board work each, 3 in flight,
        // over 7.5 ms events: the board is the bottleneck (400 ms of work in all; the air needs
        // 37 events, 277.5 ms). Add the first frame's two events and the last answer's event.
        let frames = Array(repeating: (packets: 11, work: Int64(20_000)), count: 20)
        let t = McuMgrEstimator.stepUpload(frames, ci: 7_500, packetsPerEvent: 6, depth: 3)
        #expect(t >= 400_000 && t <= 400_000 + 3 * 7_500, "\(t)")
        // With no board work the air is the bottleneck: 37 events, plus the last answer's.
        let air = McuMgrEstimator.stepUpload(
            Array(repeating: (packets: 11, work: Int64(0)), count: 20),
            ci: 7_500, packetsPerEvent: 6, depth: 3)
        #expect(air >= 37 * 7_500 && air <= 39 * 7_500, "\(air)")
        // One in flight, no work: a frame leaves in one event, its answer in the next, and the
        // next frame in the event after that: two events per frame.
        let serial = McuMgrEstimator.stepUpload(
            Array(repeating: (packets: 1, work: Int64(0)), count: 10),
            ci: 10_000, packetsPerEvent: 6, depth: 1)
        #expect(serial == 10 * 2 * 10_000, "\(serial)")
    }

    @Test func theNordicEstimateSendsWhatFitsInAnEventAndWhatTheFlashQueueHolds() throws {
        // 244-byte writes are one 251-byte packet each: 2468 µs with the empty answer, so a
        // 7.5 ms event carries 2 of them, a 15 ms event the 6 the profile allows; the legacy
        // bootloader's 27-byte packets go 6 per event at 7.5 ms.
        let fast = DFULinkClock(profile: .fast, dataLength: 251)
        let full = fast.packets(Array(repeating: 244, count: 12))
        #expect(full == Array(repeating: 251, count: 12))
        #expect(fast.events(for: full) == 6)
        #expect(DFULinkClock(profile: .deviceRequested, dataLength: 251).events(for: full) == 2)
        #expect(fast.events(for: fast.packets(Array(repeating: 20, count: 8))) == 2)
        // Each 4 KiB object at 15 ms: the Create's event (1); its answer in the first event
        // after the page erase, which the board's radio sits out (85 ms: 6 events later); the
        // 17 packets with the checksum request (3); the checksum's answer (1); the Execute's
        // round trip (2): 13 events.
        let context = EstimateContext(link: .profile(.deviceRequested), board: BoardCosts(family: .nrf52833))
        let bytes = 10 * 4096 + 100
        let waiting = NordicDFUEstimator(applicationBytes: bytes, protocol: .secure).estimate(context)
        let more = NordicDFUEstimator(applicationBytes: bytes + 4096, protocol: .secure).estimate(context)
        #expect(waiting.counts["objects"] == 11)
        #expect(abs((more.seconds - waiting.seconds) - 13 * 0.015) < 1e-6, "\(more.seconds - waiting.seconds)")
        // The erase the board's radio sits out sets the pace, not the client: a client that
        // trusted a faster erase gains nothing.
        var faster = NordicDFUOptions()
        faster.pageErase = .milliseconds(60)
        let eager = NordicDFUEstimator(applicationBytes: bytes, protocol: .secure, options: faster).estimate(context)
        #expect(eager.seconds == waiting.seconds)
        // Legacy DFU of the same bytes: 20-byte packets with a receipt every 8 take longer.
        let legacy = NordicDFUEstimator(applicationBytes: bytes, protocol: .legacy)
            .estimate(EstimateContext(link: .profile(.deviceRequested), board: BoardCosts(family: .nrf51)))
        #expect(legacy.counts["packets"] == (bytes + 19) / 20)
        #expect(legacy.seconds > waiting.seconds)
        #expect(legacy.parts.map(\.name).contains("Start DFU and the erase of the application"))
    }

    @Test func assumedBuffersAreSaidAndKnownOnesAreNot() {
        let context = EstimateContext(link: .profile(.deviceRequested), board: BoardCosts(family: .nrf52833))
        let assumed = McuMgrEstimator(imageBytes: 100_000).estimate(context)
        #expect(assumed.assumptions.count == 1)
        let known = McuMgrEstimator(imageBytes: 100_000, bufferSize: 2475, bufferCount: 4).estimate(context)
        #expect(known.assumptions.isEmpty)
        #expect(known.seconds == assumed.seconds)
        // Smaller buffers mean more frames and a slower upload.
        let small = McuMgrEstimator(imageBytes: 100_000, bufferSize: 512, bufferCount: 2).estimate(context)
        #expect((small.counts["frames"] ?? 0) > (known.counts["frames"] ?? 0))
        #expect(small.seconds > known.seconds)
    }

    @Test func theIntervalMeterNeedsTwoRoundTripsOnOneConnection() {
        var meter = IntervalMeter()
        meter.requestSent(at: .milliseconds(1000))
        meter.answerReceived(at: .milliseconds(1030))
        #expect(meter.estimatedInterval == nil)
        meter.requestSent(at: .milliseconds(1030))
        meter.answerReceived(at: .microseconds(1_060_400))
        #expect(meter.estimatedInterval == .milliseconds(15))
        meter.linkChanged()
        #expect(meter.estimatedInterval == nil && meter.roundTrips.isEmpty)
        // An answer without a request is not a round trip.
        meter.answerReceived(at: .seconds(3))
        #expect(meter.roundTrips.isEmpty)
    }
}
