import FirmwareImage
import LinkModel
import PartialFlashing
import Testing
import Transport
@testable import SimulatedBoard

/// Adapters with a connection limit: waves within it, the controller's refusal beyond it, and
/// several adapters each with its own radio.
@Suite struct AdapterLimitTests {
    static let magic: UInt32 = 0x47000

    /// `count` micro:bit V2 boards in pairing mode, each with a partial flash to run.
    static func classSet(_ count: Int, in sim: inout Simulation) throws -> (flows: [FlowOnBoard], new: MemoryImage) {
        let old = Fixture.image(family: Board.microbitV2.family, magicAt: magic, programLength: 3000, seed: 3)
        // Long enough (94 blocks) that a wave is still running when its last board is connected:
        // the controller connects boards in pairing mode about a quarter of a second apart.
        let new = Fixture.image(family: Board.microbitV2.family, magicAt: magic, programLength: 6000, seed: 21)
        var flows: [FlowOnBoard] = []
        for _ in 0..<count {
            let id = sim.addBoard(
                try SimulatedBoard(profile: BoardProfile(board: .microbitV2), image: old, mode: .pairing))
            flows.append(
                FlowOnBoard(
                    ScriptedFlasher(blocks: Fixture.blocks(of: new.slice(magic..<0x80000), from: magic)), on: id))
        }
        return (flows, new)
    }

    static func written(_ sim: Simulation, _ flows: [FlowOnBoard], _ new: MemoryImage) throws -> Bool {
        try flows.allSatisfy {
            try sim.board($0.board).readFlash(magic..<(magic + 1000)) == new.read(magic..<(magic + 1000))
        }
    }

    @Test func aClassLargerThanTheAdapterLimitIsFlashedInWavesWithinIt() throws {
        var sim = Simulation(link: .deviceRequested, adapters: [.csr8510])
        let (flows, new) = try Self.classSet(12, in: &sim)
        let runs = sim.runAll(flows, deadline: .seconds(300))
        for run in runs { #expect(throws: Never.self) { try run.outcome.get() } }
        #expect(try Self.written(sim, flows, new))
        #expect(sim.peakConnections == [5])
        #expect(sim.refusedForLimit == 0)
        // Twelve boards, five at a time: three waves, so the last finishes well after the first.
        let times = runs.map(\.modelledTime).sorted()
        #expect(times[11] > times[0] * 2)
        #expect(times[4] < times[5])
    }

    @Test func theControllerRefusesAConnectionBeyondItsLimit() throws {
        var sim = Simulation(link: .deviceRequested, adapters: [.csr8510])
        sim.placesWithinLimits = false
        let (flows, _) = try Self.classSet(6, in: &sim)
        let runs = sim.runAll(flows, deadline: .seconds(300))
        let refused = runs.compactMap { run -> String? in
            guard case .failure(let e) = run.outcome else { return nil }
            return "\(e)"
        }
        #expect(refused.count == 1)
        #expect(refused.first?.contains("le-connection-refused") == true)
        #expect(sim.peakConnections == [5])
        #expect(sim.refusedForLimit == 1)
    }

    @Test func twoAdaptersSpreadTheClassEachWithinItsOwnLimit() throws {
        var one = Simulation(link: .deviceRequested, adapters: [.csr8510])
        let single = try Self.classSet(12, in: &one)
        let alone = one.runAll(single.flows, deadline: .seconds(300)).map(\.modelledTime).max() ?? .zero

        var sim = Simulation(link: .deviceRequested, adapters: [.csr8510, .bcm20702])
        sim.logsAirSlots = true
        let (flows, new) = try Self.classSet(12, in: &sim)
        let runs = sim.runAll(flows, deadline: .seconds(300))
        for run in runs { #expect(throws: Never.self) { try run.outcome.get() } }
        #expect(try Self.written(sim, flows, new))
        #expect(runs.filter { $0.adapter == 0 }.count == 5)
        #expect(runs.filter { $0.adapter == 1 }.count == 7)
        #expect(sim.peakConnections == [5, 7])
        // Each adapter's radio carries its own connections' events, never two at once.
        for radio in sim.radios {
            let slots = radio.slots.sorted { $0.start < $1.start }
            #expect(!slots.isEmpty)
            for (a, b) in zip(slots, slots.dropFirst()) { #expect(a.end <= b.start) }
        }
        let together = runs.map(\.modelledTime).max() ?? .zero
        #expect(together < alone, "two adapters: one wave instead of three")
    }

    @Test func boardsAreSpreadOverAdaptersInTurnAndTheRestWaitForAFreeOne() throws {
        var sim = Simulation(link: .deviceRequested, adapters: [try .init(named: "2"), try .init(named: "2")])
        let (flows, _) = try Self.classSet(6, in: &sim)
        let runs = sim.runAll(flows, deadline: .seconds(300))
        for run in runs { #expect(throws: Never.self) { try run.outcome.get() } }
        #expect(sim.peakConnections == [2, 2])
        #expect(Array(runs.map(\.adapter).prefix(4)) == [0, 1, 0, 1])
        let firstWave = runs.prefix(4).map(\.modelledTime).min() ?? .zero
        #expect(runs.suffix(2).allSatisfy { $0.modelledTime > firstWave * 2 - .seconds(1) })
    }

    @Test func adapterProfilesCarryTheFiguresFound() throws {
        #expect(AdapterProfile.csr8510.maxConnections == 5)
        #expect(AdapterProfile.bcm20702.maxConnections == 7)
        #expect(try AdapterProfile(named: "pi").maxConnections == 8)
        #expect(!AdapterProfile.unknown.measured)
        #expect(try AdapterProfile(named: "csr8510:3").maxConnections == 3)
        #expect(throws: LinkModelError.self) { try AdapterProfile(named: "ax210") }
        #expect(throws: LinkModelError.self) { try AdapterProfile(named: "0") }
    }
}
