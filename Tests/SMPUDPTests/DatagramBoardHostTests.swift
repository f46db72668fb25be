import FirmwareImage
import Flashing
import SampleFirmware
import SimulatedBoard
import SMP
import Testing

/// The pure host behind `sim serve --udp`: one datagram per write, one datagram per
/// response, device work handed back with its modelled delay, nothing heard while resetting.
@Suite struct DatagramBoardHostTests {
    /// A host for an MCUboot board; `notificationSize` is the board's BLE notification payload.
    static func host(notificationSize: Int = 244) throws -> DatagramBoardHost {
        let firmware = Firmware(
            fileName: "r1-heart.hex", format: .intelHex,
            sections: [
                .init(
                    family: .nrf52833, image: SampleFirmware.image(family: .nrf52833, runtime: .r1, program: .heart),
                    warnings: [])
            ])
        let app = try #require(try FlashPlan.make(firmware: firmware, board: .microbitV2).fullImage)
        return DatagramBoardHost(
            board: try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: app.bytes) {
                $0.notificationSize = notificationSize
            })
    }

    /// Feeds `request` and performs the work it schedules until an answer comes out.
    static func answer<R: SMPRequest>(_ request: R, sequence: UInt8, host: inout DatagramBoardHost) throws -> (
        SMPFrame, DatagramBoardHost.Step
    ) {
        var step = host.received(try SMPFrame(request: request, sequence: sequence).encoded())
        #expect(step.datagrams.isEmpty, "the answer waits for the modelled command time")
        for _ in 0..<4 where step.datagrams.isEmpty {
            let work = try #require(step.work.first)
            #expect(work.delay > .zero)
            step = host.perform(work)
        }
        let datagram = try #require(step.datagrams.first)
        #expect(step.datagrams.count == 1)
        return (try SMPFrame(bytes: datagram), step)
    }

    @Test func aStateReadIsAnsweredWithOneWholeDatagramEvenWhenBLEWouldSplitIt() throws {
        // Over BLE this board would send the answer in 20-byte notifications.
        var host = try Self.host(notificationSize: 20)
        let (frame, _) = try Self.answer(ImageStateReadRequest(), sequence: 3, host: &host)
        #expect(frame.header.sequence == 3)
        let slots = try frame.response(as: ImageStateResponse.self).images
        #expect(slots == host.board.smpSlotStates)
        #expect(SMPHeader.size + Int(frame.header.length) > 20)
    }

    @Test func aResetTakesTheBoardDownAndDropsDatagramsUntilItBoots() throws {
        var host = try Self.host()
        let (frame, step) = try Self.answer(ResetRequest(), sequence: 9, host: &host)
        #expect(frame.header.group == .os)
        // The reset happens after the answer, once its delay is over.
        var next = step
        if next.downFor == nil, let work = next.work.first { next = host.perform(work) }
        let down = try #require(next.downFor)
        #expect(down >= host.timing.reboot)
        #expect(host.isDown)
        let ignored = host.received(try SMPFrame(request: ImageStateReadRequest(), sequence: 10).encoded())
        #expect(ignored.datagrams.isEmpty && ignored.work.isEmpty)
        #expect(host.droppedDatagrams == 1)
        let bootsBefore = host.board.device.bootCount
        _ = host.boot()
        #expect(!host.isDown)
        #expect(host.board.device.bootCount == bootsBefore + 1)
        let (after, _) = try Self.answer(ImageStateReadRequest(), sequence: 11, host: &host)
        #expect(after.header.sequence == 11)
    }
}
