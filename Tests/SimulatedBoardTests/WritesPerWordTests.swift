import FirmwareImage
import LinkModel
import NordicDFU
import PartialFlashing
import Testing
@testable import SimulatedBoard

/// No word of the flash is written more often between two erases of its page than the product
/// specifications allow (nWRITE, `FlashMemory.writesPerWordLimit`), over whole flashes: every
/// update path, every board kind, with and without recoveries. The simulated flash counts the
/// writes of each word since its page was last erased.
@Suite struct WritesPerWordTests {
    /// Where the test programs start, per chip.
    static func magic(_ family: ChipFamily) -> UInt32 { family == .nrf51 ? 0x30000 : 0x47000 }

    static func images(_ board: Board) -> (old: MemoryImage, new: MemoryImage) {
        let family = board.family
        // Three 4 KB pages on the nRF52833, five 1 KB pages on the nRF51.
        let length = family == .nrf51 ? 4500 : 9000
        let old = Fixture.image(family: family, magicAt: magic(family), programLength: length + 700, seed: 3)
        let new = Fixture.image(
            family: family, magicAt: magic(family), programLength: length, seed: 5,
            programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])
        return (old, new)
    }

    /// The faults of a run: none, or ones that make the writer recover.
    enum Trouble: String, CaseIterable, Sendable {
        case none
        /// The 4th packet of a middle block lost: a fill-in.
        case lostPacket
        /// The answer of a block lost: fill-ins, then the recovery and its barrier.
        case lostAnswer
        /// The answers of the hash block and of the block after it lost.
        case lostAnswersAtTheEnd
        /// The link drops in the middle of the write: a reconnection.
        case linkDrop
    }

    static func faults(_ trouble: Trouble, writes: Int, notifications: [String]) -> FaultPlan {
        let acks = notifications.indices.filter { notifications[$0] == "01FF" }
        var plan = FaultPlan(seed: 7)
        switch trouble {
        case .none: break
        case .lostPacket: plan.dropWriteAt = [writes / 2 / 4 * 4 + 3]
        case .lostAnswer: plan.dropNotificationAt = [acks[acks.count / 2]]
        case .lostAnswersAtTheEnd: plan.dropNotificationAt = Set(acks.suffix(2))
        case .linkDrop: plan.disconnectAtWrite = [writes / 2]
        }
        return plan
    }

    struct Run {
        var stats: PartialFlashStats?
        var error: String?
        var writes = 0
        var notifications: [String] = []
        var board: SimulatedBoard
    }

    static func partialFlash(_ board: Board, faults: FaultPlan) throws -> Run {
        let (old, new) = images(board)
        let program = try #require(MakeCodeProgram.find(in: new, family: board.family))
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let id = sim.addBoard(
            try SimulatedBoard(board, image: old, mode: .application, bluetoothInApplicationMode: true))
        let run = sim.run(
            PartialFlashFlow(image: new, program: program, family: board.family), on: id, deadline: .seconds(600))
        var result = Run(board: try sim.board(id))
        switch run.outcome {
        case let .success(.flashed(s)): result.stats = s
        case let .success(other): result.error = "\(other)"
        case let .failure(e): result.error = "\(e)"
        }
        result.writes = run.trace.entries.filter { $0.kind == .write }.count
        result.notifications = run.trace.entries.filter { $0.kind == .notification }.map(\.text)
        return result
    }

    @Test(arguments: Board.allCases, Trouble.allCases)
    func aPartialFlashWritesNoWordMoreThanTwiceBetweenErases(board: Board, trouble: Trouble) throws {
        let clean = try Self.partialFlash(board, faults: .none)
        let run = try Self.partialFlash(
            board, faults: Self.faults(trouble, writes: clean.writes, notifications: clean.notifications))
        let stats = try #require(run.stats, "\(board) \(trouble): \(run.error ?? "?")")
        #expect(stats.verified)
        let flash = run.board.flash
        #expect(
            flash.writesOverLimit == 0,
            "\(board) \(trouble): a word was written \(flash.mostWritesPerWord) times between erases")
        // END_OF_TRANSMISSION burns the last block once more: the count reaches the limit there.
        #expect(flash.mostWritesPerWord == FlashMemory.writesPerWordLimit)
        let (_, new) = Self.images(board)
        let program = try #require(MakeCodeProgram.find(in: new, family: board.family))
        #expect(try flash.read(program.region) == new.read(program.region, fill: 0xFF))
    }

    @Test(arguments: [Board.microbitV2, .microbitV1])
    func aNordicDFUWritesEveryWordOnce(board: Board) throws {
        let (old, new) = Self.images(board)
        var sim = Simulation(link: .deviceRequested, faults: .none)
        let id = sim.addBoard(try SimulatedBoard(profile: SimulatedBoard.stockProfile(board), image: old))
        let run = sim.run(NordicDFUFlow(image: new, family: board.family), on: id, deadline: .seconds(600))
        #expect((try? run.outcome.get())?.verified == true)
        let flash = try sim.board(id).flash
        #expect(flash.writesOverLimit == 0 && flash.mostWritesPerWord == 1)
    }

    @Test func theFlashCountsEachWordsWritesUntilItsPageIsErased() throws {
        var flash = FlashMemory(layout: ChipFamily.nrf52833.layout)
        let block = [UInt8](repeating: 0xA5, count: 64)
        for _ in 0..<3 { try flash.writeWords(block, at: 0x47000) }
        #expect(flash.mostWritesPerWord == 3 && flash.writesOverLimit == 16)
        #expect(flash.writesSinceErase[0x47000] == 3 && flash.writesSinceErase[0x47040] == nil)
        try flash.erasePage(at: 0x47000)
        try flash.writeWords(block, at: 0x47000)
        #expect(flash.writesSinceErase[0x47000] == 1 && flash.writesOverLimit == 16)
    }
}
