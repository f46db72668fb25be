import FirmwareImage
import PartialFlashingFrames
import Testing
@testable import PartialFlashing

@Suite struct DecisionTests {
    let program = MakeCodeProgram(
        magicAddress: 0x47000, runtimeHash: runtimeHash, programHash: newProgramHash,
        region: 0x47000..<0x4BD80)

    func board(
        runtime: [UInt8] = runtimeHash, start: UInt32 = 0x47000, end: UInt32 = 0x73000,
        hash: [UInt8] = oldProgramHash, version: UInt8 = 1
    ) -> BoardMemoryMap {
        BoardMemoryMap(
            protocolVersion: version, mode: .pairing,
            runtime: RegionInfo(id: 1, start: 0x1C000, end: 0x46B00, hash: runtime),
            program: RegionInfo(id: 2, start: start, end: end, hash: hash))
    }

    @Test func choosesPartialWhenRuntimeAndStartMatch() {
        #expect(PartialFlashDecision(board: board(), program: program, family: .nrf52833) == .partial)
    }

    @Test func reportsUpToDateWhenProgramHashMatches() {
        #expect(
            PartialFlashDecision(board: board(hash: newProgramHash), program: program, family: .nrf52833) == .upToDate)
    }

    @Test func requiresFullFlashWhenRuntimeDiffers() {
        let other: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0, 1, 2, 3]
        let d = PartialFlashDecision(board: board(runtime: other), program: program, family: .nrf52833)
        #expect(d == .fullRequired(.runtimeDiffers(board: other, file: runtimeHash)))
        guard case let .fullRequired(reason) = d else { return }
        #expect(reason.code == "runtime-differs")
        #expect(reason.description.contains("DEADBEEF00010203") && reason.description.contains("22204AC874977E7F"))
    }

    @Test func requiresFullFlashWhenProgramMoved() {
        let d = PartialFlashDecision(board: board(start: 0x45000), program: program, family: .nrf52833)
        #expect(d == .fullRequired(.programMoved(board: 0x45000, file: 0x47000)))
        guard case let .fullRequired(reason) = d else { return }
        #expect(reason.code == "program-moved")
        #expect(reason.description.contains("0x00045000") && reason.description.contains("0x00047000"))
    }

    @Test func requiresFullFlashWhenBoardHasNoProgram() {
        let empty = board(start: 0, end: 0, hash: [UInt8](repeating: 0, count: 8))
        let d = PartialFlashDecision(board: empty, program: program, family: .nrf52833)
        #expect(d == .fullRequired(.boardHasNoProgram(empty.program)))
        // DAL: a region but zero hashes.
        let dal = board(runtime: [UInt8](repeating: 0, count: 8), hash: [UInt8](repeating: 0, count: 8))
        guard case let .fullRequired(reason) = PartialFlashDecision(board: dal, program: program, family: .nrf52833)
        else { Issue.record("expected a full flash"); return }
        #expect(reason.code == "board-has-no-program")
        #expect(reason.description.contains("0000000000000000"))
    }

    @Test func requiresFullFlashWhenFileHasNoProgram() {
        let d = PartialFlashDecision(board: board(), program: nil, family: .nrf52833)
        #expect(d == .fullRequired(.fileHasNoProgram))
        guard case let .fullRequired(reason) = d else { return }
        #expect(reason.code == "file-has-no-program")
    }

    @Test func requiresFullFlashWhenRegionDoesNotFit() {
        let d = PartialFlashDecision(board: board(end: 0x4A000), program: program, family: .nrf52833)
        #expect(d == .fullRequired(.regionDoesNotFit(program: 0x47000..<0x4BD80, board: 0x47000..<0x4A000)))
        guard case let .fullRequired(reason) = d else { return }
        #expect(reason.code == "region-does-not-fit")
        #expect(reason.description.contains("0x0004BD80") && reason.description.contains("0x0004A000"))
        // Past the scratch page is never writable, whatever the board declares.
        let huge = MakeCodeProgram(
            magicAddress: 0x47000, runtimeHash: runtimeHash, programHash: newProgramHash,
            region: 0x47000..<0x73040)
        #expect(
            PartialFlashDecision(board: board(end: 0x77000), program: huge, family: .nrf52833)
                == .fullRequired(.regionDoesNotFit(program: 0x47000..<0x73040, board: 0x47000..<0x73000)))
    }

    @Test func requiresFullFlashForUnknownProtocolVersion() {
        let d = PartialFlashDecision(board: board(version: 2), program: program, family: .nrf52833)
        #expect(d == .fullRequired(.unsupportedProtocol(version: 2)))
    }

    @Test func reasonCodesAreStableAndDistinct() {
        let reasons: [FullFlashReason] = [
            .fileHasNoProgram, .boardHasNoProgram(RegionInfo(id: 2, start: 0, end: 0, hash: [])),
            .runtimeDiffers(board: [], file: []), .programMoved(board: 0, file: 0),
            .regionDoesNotFit(program: 0..<1, board: 0..<1), .unsupportedProtocol(version: 9)
        ]
        #expect(
            reasons.map(\.code) == [
                "file-has-no-program", "board-has-no-program", "runtime-differs",
                "program-moved", "region-does-not-fit", "unsupported-protocol"
            ])
        #expect(
            reasons.allSatisfy {
                $0.description.hasSuffix("full flash is needed")
                    || $0.description.contains("only a full flash")
            })
    }
}
