import FirmwareImage
import LinkModel
import McuMgr
import SMP
import Testing
import Transport
@testable import SimulatedBoard

/// A seeded fault campaign: McuMgr upgrades against the simulated SMP server with
/// disconnects mid-upload, lost and duplicated notifications, lost writes, device resets,
/// refused connections and error answers. Every run must end verified (the board runs the
/// new image) or with a clear McuMgr error, and none may run into its deadline.
@Suite struct SMPServerFaultCampaignTests {
    static let runs = 1000
    static let deadline: Duration = .seconds(900)

    struct Tally: CustomStringConvertible {
        var verified = 0
        var failed: [String: Int] = [:]
        var faults = FaultCounters()
        var busy = 0, flashFailures = 0, resumes = 0, retries = 0, resentBytes = 0
        var longest: Duration = .zero
        var description: String {
            "verified \(verified), failed \(failed.values.reduce(0, +)) \(failed.sorted { $0.key < $1.key }); "
                + "faults: \(faults); busy answers \(busy), flash write failures \(flashFailures); "
                + "resumes \(resumes), retries \(retries), re-sent bytes \(resentBytes); longest run \(longest)"
        }
    }

    /// The faults of run `seed`: every run gets some, the seed picks the mix.
    static func plan(seed: UInt64) -> FaultPlan {
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        var plan = FaultPlan(seed: seed)
        plan.dropNotification = 0.02
        plan.duplicateNotification = 0.01
        switch seed % 4 {
        case 0: plan.disconnectAtWrite = [Int(rng.next() % 120) + 5]
        case 1: plan.resetDeviceAt = [.milliseconds(1_200 + Int64(rng.next() % 2_500))]
        case 2:
            plan.dropWrite = 0.002
            plan.refuseConnection = 0.2
        default:
            plan.disconnectAtWrite = [Int(rng.next() % 60) + 5, Int(rng.next() % 60) + 80]
            plan.slowErase = 0.05
        }
        return plan
    }

    @Test func everyRunEndsVerifiedOrWithAClearError() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1800)
        var tally = Tally()
        for seed in 0..<UInt64(Self.runs) {
            var sim = Simulation(
                link: [.deviceRequested, .fast, .linuxDefault][Int(seed % 3)], faults: Self.plan(seed: seed))
            sim.recordsTrace = false
            let board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes) { config in
                config.busyAnswerProbability = 0.01
                config.flashWriteFailureProbability = seed % 10 == 9 ? 0.02 : 0
            }
            let id = sim.addBoard(board)
            var options = SMPFixture.options(seed % 5 == 4 ? .confirmOnly : .testAndConfirm, fast: seed % 2 == 0)
            options.requestTimeout = .seconds(5)
            let run = sim.run(
                McuMgrUpgrade(image: SMPFixture.upgrade(new), options: options), on: id, deadline: Self.deadline)
            let after = try sim.board(id)
            tally.faults.add(run.statistics.faults)
            tally.busy += after.smpServer?.statistics.injectedBusy ?? 0
            tally.flashFailures += after.smpServer?.statistics.injectedFlashFailures ?? 0
            tally.longest = max(tally.longest, run.modelledTime)
            switch run.outcome {
            case let .success(result):
                tally.verified += 1
                tally.resumes += result.resumes
                tally.retries += result.retries
                tally.resentBytes += result.resentBytes
                let slot = try #require(after.smpServer).configuration.primarySlot
                let flash = try after.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(new.bytes.count)))
                #expect(flash == new.bytes, "seed \(seed): verified but the primary slot differs")
                #expect(after.memoryMap.last?.hash == SMPFixture.newProgramHash, "seed \(seed)")
            case let .failure(error):
                let mcuMgr = error as? McuMgrFailure
                #expect(mcuMgr != nil, "seed \(seed): not an McuMgr error: \(error)")
                // The message says what the board holds, read back, or that it could not be read.
                #expect(
                    "\(error)".contains("the board reports slot 0") || "\(error)".contains("could not be read back")
                        || "\(error)".contains("last state read"), "seed \(seed): \(error)")
                #expect("\(error)".count > 40, "seed \(seed): unclear error: \(error)")
                tally.failed[Self.kind(of: error), default: 0] += 1
            }
            #expect(run.modelledTime < Self.deadline, "seed \(seed) ran into its deadline")
        }
        print("McuMgr fault campaign, \(Self.runs) runs: \(tally)")
        #expect(tally.verified + tally.failed.values.reduce(0, +) == Self.runs)
        // Injected flash write failures end their runs by design; of the rest at least 97 % verify.
        let injected = tally.failed.filter { $0.key.contains("FLASH_WRITE_FAILED") }.values.reduce(0, +)
        #expect(tally.verified * 100 >= (Self.runs - injected) * 97)
        #expect(tally.faults.disconnects > 0 && tally.faults.deviceResets > 0 && tally.faults.droppedNotifications > 0)
        #expect(tally.busy > 0 && tally.flashFailures > 0)
    }

    static func kind(of error: any Error) -> String {
        guard let e = (error as? McuMgrFailure)?.cause else { return "other" }
        switch e {
        case let .deviceRefused(command, answer):
            return "refused \(command): \(McuMgrError.describe(answer).prefix(40))"
        default: return String("\(e)".prefix(50))
        }
    }
}

extension FaultCounters {
    mutating func add(_ other: FaultCounters) {
        droppedWrites += other.droppedWrites
        droppedNotifications += other.droppedNotifications
        duplicatedNotifications += other.duplicatedNotifications
        delayedNotifications += other.delayedNotifications
        disconnects += other.disconnects
        refusedConnections += other.refusedConnections
        deviceResets += other.deviceResets
        slowErases += other.slowErases
    }
}
