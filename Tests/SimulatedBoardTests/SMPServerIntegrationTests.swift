import FirmwareImage
import LinkModel
import McuMgr
import SMP
import Testing
import PartialFlashing
import Transport
@testable import SimulatedBoard

/// `McuMgrUpgrade` against the simulated board's SMP server through the `Simulation`.
@Suite struct SMPServerIntegrationTests {
    struct Outcome {
        var result: McuMgrResult
        var board: SimulatedBoard
        var time: Duration
        var statistics: RunStatistics
    }

    static func upgrade(
        old: SimulatedMCUbootImage, new: SimulatedMCUbootImage, options: McuMgrUpgradeOptions,
        profile: LinkProfile = .deviceRequested
    ) throws -> Outcome {
        var sim = Simulation(link: profile)
        sim.recordsTrace = false
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: options), on: id, deadline: .seconds(600))
        return Outcome(
            result: try run.outcome.get(), board: try sim.board(id), time: run.modelledTime, statistics: run.statistics)
    }

    @Test(arguments: [true, false])
    func upgradesTheBoardByteExactly(fast: Bool) throws {
        let (old, new) = try SMPFixture.images()
        let outcome = try Self.upgrade(old: old, new: new, options: SMPFixture.options(fast: fast))
        let layout = SMPFixture.layout
        let server = try #require(outcome.board.smpServer)
        let slot = server.configuration.primarySlot
        // The primary slot holds the new image, its payload at the application start; the old
        // image went to the secondary slot.
        #expect(try outcome.board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(new.bytes.count))) == new.bytes)
        #expect(
            try outcome.board.readFlash(
                layout.applicationStart..<(layout.applicationStart + UInt32(new.bytes.count - 0x1000 - 40)))
                == Array(new.bytes[0x1000..<(new.bytes.count - 40)]))
        #expect(Array(server.secondary.prefix(old.bytes.count)) == old.bytes)
        #expect(server.primaryConfirmed && !server.pendingTest)
        #expect(server.statistics.swaps == 1 && server.statistics.reverts == 0)
        // The partial-flashing memory map, computed from flash, shows the new program.
        #expect(outcome.board.memoryMap.count == 3)
        #expect(outcome.board.memoryMap.last?.hash == SMPFixture.newProgramHash)
        #expect(outcome.result.bytesSent == new.bytes.count && outcome.result.resentBytes == 0)
        #expect(outcome.result.pipelineDepth == (fast ? 3 : 1))
        #expect(outcome.result.largestFrame <= (fast ? 2475 : 244) && outcome.result.largestWrite <= 244)
        #expect(
            outcome.result.finalSlots.first?.hash == new.hash && outcome.result.finalSlots.first?.version == "2.1.3.4")
        #expect(server.statistics.refusedWrites == 0)
    }

    @Test func thePartialFlashingMemoryMapReportsTheNewFirmware() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x24000, programLength: 0x2000)
        var sim = Simulation(link: .deviceRequested)
        sim.recordsTrace = false
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
        let before = try sim.run(MemoryMapReader(family: .nrf52833), on: id, deadline: .seconds(60)).outcome.get()
        #expect(before.runtime.hash == SMPFixture.oldRuntimeHash && before.program.hash == SMPFixture.oldProgramHash)
        _ = try sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: SMPFixture.options(fast: true)),
            on: id, deadline: .seconds(300)
        ).outcome.get()
        let after = try sim.run(MemoryMapReader(family: .nrf52833), on: id, deadline: .seconds(60)).outcome.get()
        #expect(after.runtime.hash == SMPFixture.newRuntimeHash && after.program.hash == SMPFixture.newProgramHash)
        #expect(after.runtime.start == SMPFixture.layout.applicationStart)
    }

    @Test func aTestedImageRevertsOnTheNextReset() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x24000, programLength: 0x2000)
        var sim = Simulation(link: .fast)
        sim.recordsTrace = false
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: SMPFixture.options(.testOnly, fast: true)),
            on: id, deadline: .seconds(300))
        _ = try run.outcome.get()
        var board = try sim.board(id)
        #expect(board.memoryMap.last?.hash == SMPFixture.newProgramHash)
        #expect(board.smpServer?.primaryConfirmed == false)
        board.reset()
        let slot = try #require(board.smpServer).configuration.primarySlot
        #expect(try board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(old.bytes.count))) == old.bytes)
        #expect(board.memoryMap.last?.hash == SMPFixture.oldProgramHash)
        #expect(board.smpServer?.statistics.reverts == 1)
    }

    @Test func confirmOnlyInstallsPermanently() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x24000, programLength: 0x2000)
        let outcome = try Self.upgrade(
            old: old, new: new, options: SMPFixture.options(.confirmOnly, fast: true), profile: .fast)
        var board = outcome.board
        board.reset()
        #expect(board.memoryMap.last?.hash == SMPFixture.newProgramHash)
        #expect(board.smpServer?.statistics.reverts == 0)
    }

    @Test func pipelinesDeeperThanTheBuffersAllowCostRefusedWritesButStillVerify() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x24000, programLength: 0x2000)
        var options = SMPFixture.options(fast: true)
        options.pipelineDepth = 4
        let outcome = try Self.upgrade(old: old, new: new, options: options, profile: .fast)
        #expect(outcome.result.pipelineDepth == 4)
        #expect((outcome.board.smpServer?.statistics.refusedWrites ?? 0) > 0)
        #expect(outcome.result.retries > 0 && outcome.result.resentBytes > 0)
        #expect(outcome.board.memoryMap.last?.hash == SMPFixture.newProgramHash)
    }

    @Test func sameSeedGivesTheSameTrace() throws {
        let (old, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        var traces: [Trace] = []
        for _ in 0..<2 {
            var sim = Simulation(link: .deviceRequested, faults: SMPServerFaultCampaignTests.plan(seed: 7))
            let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
            let run = sim.run(
                McuMgrUpgrade(image: SMPFixture.upgrade(new), options: SMPFixture.options(fast: true)),
                on: id, deadline: .seconds(600))
            _ = try run.outcome.get()
            traces.append(run.trace)
        }
        #expect(traces[0] == traces[1])
        #expect(traces[0].entries.count > 100)
    }

    /// The modelled time against the full-DFU lower bound, per link profile.
    @Test(arguments: LinkProfile.named)
    func staysCloseToTheLowerBoundWithPipeliningAndReassembly(profile: LinkProfile) throws {
        let (old, new) = try SMPFixture.images()
        let fast = try Self.upgrade(old: old, new: new, options: SMPFixture.options(fast: true), profile: profile)
        let fastBound = try SMPFixture.bound(old: old, new: new, frameLimit: 2475, profile: profile)
        let slow = try Self.upgrade(old: old, new: new, options: SMPFixture.options(fast: false), profile: profile)
        let slowBound = try SMPFixture.bound(old: old, new: new, frameLimit: 244, profile: profile)
        let fastRatio = fast.time / fastBound, slowRatio = slow.time / slowBound
        print(
            "full DFU \(new.bytes.count) B on \(profile.name): pipelining+reassembly \(fast.time) (bound \(fastBound), ratio \(fastRatio)); "
                + "neither \(slow.time) (bound \(slowBound), ratio \(slowRatio))")
        #expect(fastRatio >= 1 && slowRatio >= 1)
        #expect(fastRatio <= 1.10)
        #expect(fast.time < slow.time)
    }
}
