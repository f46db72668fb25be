import FirmwareImage
import PartialFlashingFrames
import Testing
@testable import PartialFlashing

/// A program the runtime's scan found pages past the runtime's end was left behind by an earlier
/// build (a full update of a smaller application erased only its own pages): its hashes say
/// nothing of the runtime in flash, so partial flashing is not chosen.
@Suite struct ProgramLeftBehindDecisionTests {
    static let hash: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]

    static func map(_ family: ChipFamily, runtimeEnd: UInt32, program: UInt32) -> BoardMemoryMap {
        BoardMemoryMap(
            protocolVersion: 1, mode: .application,
            runtime: RegionInfo(id: 1, start: family.layout.applicationStart, end: runtimeEnd, hash: hash),
            program: RegionInfo(id: 2, start: program, end: family == .nrf51 ? 0x3BBFF : 0x73000, hash: hash))
    }

    @Test func aProgramOnThePageAfterItsRuntimeFollowsIt() {
        // DAL's own default for region 2: the page after FLASH_PROGRAM_END, a whole page on when aligned.
        #expect(
            PartialFlashDecision.programLeftBehind(
                Self.map(.nrf51, runtimeEnd: 0x353A0, program: 0x35400), family: .nrf51) == nil)
        #expect(
            PartialFlashDecision.programLeftBehind(
                Self.map(.nrf51, runtimeEnd: 0x35400, program: 0x35800), family: .nrf51) == nil)
        #expect(
            PartialFlashDecision.programLeftBehind(
                Self.map(.nrf52833, runtimeEnd: 0x46B00, program: 0x47000), family: .nrf52833) == nil)
    }

    @Test func aProgramPagesPastTheRuntimeIsLeftBehindAndNeedsAFullFlash() {
        // The board: the Calliope mini demo (to 0x2E558) over r1 with its program at 0x35400.
        let board = Self.map(.nrf51, runtimeEnd: 0x2E558, program: 0x35400)
        #expect(PartialFlashDecision.programLeftBehind(board, family: .nrf51) == 0x2E558)
        let program = MakeCodeProgram(
            magicAddress: 0x35400, runtimeHash: Self.hash, programHash: [9, 9, 9, 9, 9, 9, 9, 9],
            region: 0x35400..<0x37410)
        let decision = PartialFlashDecision(board: board, program: program, family: .nrf51)
        #expect(decision == .fullRequired(.programLeftBehind(runtimeEnd: 0x2E558, programStart: 0x35400)))
        guard case let .fullRequired(reason) = decision else { return }
        #expect(reason.code == "program-left-behind")
        #expect(
            reason.description.contains("runtime ends at 0x0002E558 but the program it reports starts at 0x00035400"))
    }
}
