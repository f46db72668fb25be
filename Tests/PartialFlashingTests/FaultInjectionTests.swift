import FirmwareImage
import Testing
import Transport
@testable import PartialFlashing

/// Runs the whole flow against the model board under seeded faults. Whatever happens, a run
/// either ends with the board holding exactly the new program, or with a `PartialFlashError`;
/// it never reports success over a corrupted program, never stalls, and never sends
/// END_OF_TRANSMISSION without a written block.
@Suite struct FaultInjectionTests {
    struct Outcome {
        var flashed = 0
        var failed = 0
        var injected = 0
    }

    func runMany(
        _ faults: Faults, seeds: Range<UInt64>, family: ChipFamily,
        settings: PartialFlashSettings = PartialFlashSettings(), latency: Duration = .milliseconds(15)
    ) -> Outcome {
        let start: UInt32 = family == .nrf52833 ? 0x47000 : 0x35400
        var outcome = Outcome()
        for seed in seeds {
            let (image, program) = makeProgram(at: start, bodySize: 2500 + Int(seed % 7) * 500, seed: seed)
            let board = boardWithOldProgram(
                family: family, at: start, mode: seed % 5 == 0 ? .application : .pairing,
                seed: seed &+ 1000)
            var driver = LoopbackDriver(
                flow: PartialFlashFlow(image: image, program: program, family: family, settings: settings),
                board: board, faults: faults, seed: seed, latency: latency)
            let finished = driver.run()
            #expect(finished, "seed \(seed): the flow stalled")
            let violations = driver.board.violations
            #expect(violations.isEmpty, "seed \(seed): \(violations)")
            outcome.injected += driver.injected
            switch driver.flow.outcome {
            case .success(.flashed)?:
                outcome.flashed += 1
                let holds = boardHolds(driver.board, image: image, program: program, pageSize: family.pageSize)
                #expect(holds, "seed \(seed): reported flashed but the board holds something else")
            case let .failure(error)?:
                outcome.failed += 1
                #expect(error is PartialFlashError, "seed \(seed): \(error)")
            default:
                Issue.record("seed \(seed): unexpected outcome \(String(describing: driver.flow.outcome))")
            }
        }
        return outcome
    }

    @Test func flashesCorrectlyWithoutFaults() {
        let v2 = runMany(.none, seeds: 0..<10, family: .nrf52833)
        let v1 = runMany(.none, seeds: 0..<10, family: .nrf51)
        #expect(v2.flashed == 10 && v1.flashed == 10)
    }

    @Test func recoversFromLostPacketsAndNotifications() {
        let faults = Faults(dropWrite: 0.02, dropNotification: 0.03)
        let v2 = runMany(faults, seeds: 0..<40, family: .nrf52833)
        let v1 = runMany(faults, seeds: 40..<80, family: .nrf51)
        #expect(v2.injected + v1.injected > 100, "the faults were really injected")
        // Retries absorb losses at these rates; the bound is loose so that it tests recovery, not luck.
        #expect(v2.flashed + v1.flashed >= 72)
    }

    @Test func recoversFromLinkLossesAndBoardResets() {
        let faults = Faults(dropWrite: 0.01, linkLoss: 0.002, boardReset: 0.001)
        let v2 = runMany(faults, seeds: 100..<140, family: .nrf52833)
        let v1 = runMany(faults, seeds: 140..<180, family: .nrf51)
        #expect(v2.injected + v1.injected > 40)
        #expect(v2.flashed + v1.flashed >= 60)
    }

    @Test func staysCorrectWhenAnswersArriveAfterTheTimeout() {
        // Late 01 FF / 01 AA after a timeout resend, plus some losses.
        let faults = Faults(dropWrite: 0.01, dropNotification: 0.01, delayNotification: 0.02)
        let v2 = runMany(faults, seeds: 300..<340, family: .nrf52833)
        let v1 = runMany(faults, seeds: 340..<380, family: .nrf51)
        #expect(v2.injected + v1.injected > 80)
        #expect(v2.flashed + v1.flashed >= 72)
    }

    @Test func duplicatedAnswersAreCaughtAsOneAnswerTooManyAndNeverEndInSuccessOverAWrongProgram() {
        // Hostile: a BLE link never duplicates a notification. A copy of 01 FF is taken for the next
        // block's answer (nothing can tell them apart); the writer runs one answer ahead from then on,
        // and the answer too many shows up in a recovery or after END_OF_TRANSMISSION: the write
        // fails instead of claiming success. (With losses on top, a loss can cancel the answer too
        // many out; `PartialFlashWriter` says what no client can prevent.)
        let faults = Faults(duplicateNotification: 0.02)
        let v2 = runMany(faults, seeds: 400..<440, family: .nrf52833)
        let v1 = runMany(faults, seeds: 440..<480, family: .nrf51)
        #expect(v2.injected + v1.injected > 40)
        #expect(v2.failed + v1.failed > 20, "the duplicates were noticed")
        #expect(v2.flashed + v1.flashed + v2.failed + v1.failed == 80)
    }

    @Test func flashesWithAZeroLatencyDriver() {
        let lossy = runMany(
            Faults(dropWrite: 0.02, dropNotification: 0.02), seeds: 500..<520, family: .nrf52833,
            latency: .zero)
        #expect(lossy.flashed >= 18)
    }

    @Test func failsCleanlyUnderHeavyLoss() {
        let heavy = runMany(Faults(dropWrite: 0.3, dropNotification: 0.3), seeds: 200..<220, family: .nrf52833)
        #expect(heavy.failed > 0, "heavy loss exhausts the retry limits")
        #expect(heavy.flashed + heavy.failed == 20)
    }

    @Test func sameSeedGivesTheSameRun() {
        let (image, program) = makeProgram(bodySize: 6000, seed: 5)
        func once() -> ([[UInt8]], Duration) {
            var driver = LoopbackDriver(
                flow: PartialFlashFlow(image: image, program: program, family: .nrf52833),
                board: boardWithOldProgram(family: .nrf52833, at: 0x47000),
                faults: Faults(dropWrite: 0.05, dropNotification: 0.05), seed: 42)
            _ = driver.run()
            return (driver.written, driver.now)
        }
        let (a, b) = (once(), once())
        #expect(a.0 == b.0 && a.1 == b.1)
    }
}
