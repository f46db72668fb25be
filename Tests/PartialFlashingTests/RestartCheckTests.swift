import FirmwareImage
import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// The check after a loss that followed `FF 00`, against the board's packet counters (CODAL and
/// DAL `flashData`, as `ModelBoard` keeps them): at every number a block can go as, the probe
/// tells a restarted board from one that has the block in doubt in any part.
@Suite struct RestartCheckTests {
    /// A board that took a barrier, then `steps` steps and `blocks` whole blocks, then `arrived`
    /// packets of the block in doubt numbered from `group`.
    func board(steps: Int, blocks: Int, arrived: Int, group: UInt8, writer: PartialFlashWriter) -> ModelBoard {
        var board = ModelBoard(family: .nrf52833)
        _ = board.receive([0x00, 0x02])
        var expected: UInt8 = 0
        for _ in 0..<steps {
            _ = board.receive(stepPacket(expecting: expected))
            expected &+= 4
        }
        for k in 0..<blocks {
            for packet in writer.packets(of: writer.plan.blocks[k], from: expected) { _ = board.receive(packet) }
            expected &+= 4
        }
        #expect(expected == group)
        for packet in writer.packets(of: writer.plan.blocks[blocks], from: group).prefix(arrived) {
            _ = board.receive(packet)
        }
        return board
    }

    @Test func theProbeTellsARestartedBoardFromOneWithAnyOfTheBlockAtEveryNumberUsed() throws {
        let (plan, program) = try makePlan(bodySize: 4000)
        let writer = PartialFlashWriter(plan: plan, program: program)
        // Blocks go as packets 0 (after a barrier with no reconnection before it, or a step past 252) to 248.
        for group in [UInt8(0)] + Array(stride(from: UInt8(4), through: 248, by: 4)) {
            let (number, aaMeansRestart) = try #require(
                PartialFlashWriter.restartProbe(for: group), "packets from \(group)")
            let probe = PartialFlashingRequest.flashData(
                offsetField: 0, packetNumber: number, data: [UInt8](repeating: 0xFF, count: 16)
            ).bytes
            var restarted = ModelBoard(family: .nrf52833)
            let afterRestart = restarted.receive(probe).notifications
            #expect(afterRestart == (aaMeansRestart ? [[0x01, 0xAA]] : []), "packets from \(group)")
            let steps = group == 0 ? 0 : 1
            let blocks = group == 0 ? 0 : Int(group / 4) - 1
            for arrived in 0...4 {
                var kept = board(steps: steps, blocks: blocks, arrived: arrived, group: group, writer: writer)
                let answer = kept.receive(probe).notifications
                if group == 0 && arrived == 0 {
                    // The one state no packet can tell from a restart: nothing of the block arrived.
                    #expect(answer == afterRestart)
                } else {
                    #expect(answer != afterRestart, "packets from \(group), \(arrived) of them arrived")
                }
            }
        }
    }

    @Test func noPacketTellsARestartFromABlockFrom252ThatArrivedWhole() throws {
        let (plan, program) = try makePlan(bodySize: 9000)
        let writer = PartialFlashWriter(plan: plan, program: program)
        #expect(PartialFlashWriter.restartProbe(for: 252) == nil)
        // Its counters are those of a restarted board: every packet number gets the same answer.
        let kept = board(steps: 0, blocks: 63, arrived: 4, group: 252, writer: writer)
        for number in 0...255 {
            let packet = PartialFlashingRequest.flashData(
                offsetField: 0, packetNumber: UInt8(number), data: [UInt8](repeating: 0xFF, count: 16)
            ).bytes
            var restarted = ModelBoard(family: .nrf52833)
            var copy = kept
            #expect(copy.receive(packet).notifications == restarted.receive(packet).notifications)
        }
    }

    @Test func aStepIsAnsweredOutOfOrderAndMovesTheBoardOnByOneBlock() {
        for expected in [UInt8(0), 252] {
            var board = ModelBoard(family: .nrf52833)
            _ = board.receive([0x00, 0x02])
            var reached: UInt8 = 0
            while reached != expected {  // 63 steps of 4 to 252
                _ = board.receive(stepPacket(expecting: reached))
                reached &+= 4
            }
            #expect(board.receive(stepPacket(expecting: expected)).notifications == [[0x01, 0xAA]])
            // Packet expected + 4 is now in order: the board takes it without an answer.
            let next = PartialFlashingRequest.flashData(
                offsetField: 0, packetNumber: expected &+ 4, data: [UInt8](repeating: 0xFF, count: 16)
            ).bytes
            #expect(board.receive(next).notifications.isEmpty)
        }
    }
}
