import FirmwareImage
import LinkModel
import McuMgr
import SMP
import Testing
import Transport
@testable import SimulatedBoard

/// The SMP server on its own: writes go straight to its handler, work runs at once.
@Suite struct SMPServerTests {
    struct Bench {
        var board: SimulatedBoard
        var server: SMPServer
        var answers: [[UInt8]] = []
        /// The bytes of the last answer `send` took.
        var lastAnswer: [UInt8]?
        var resets = 0
        var now = VirtualInstant.zero

        init() throws {
            let (old, _) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
            board = try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes)
            server = try #require(board.smpServer)
        }

        func effects() -> ServiceEffects {
            ServiceEffects(
                now: now, timing: DeviceTiming.of(.nrf52833), rng: SplitMix64(seed: 1), slowErase: 0, slowEraseFactor: 1
            )
        }

        /// Writes `bytes` and runs the work it causes; returns the notifications (joined per answer).
        mutating func write(_ bytes: [UInt8]) -> [[UInt8]] {
            var e = effects()
            server.didWrite(bytes, to: SMPGATT.characteristic, kind: .command, device: &board.device, effects: &e)
            return settle(e)
        }

        mutating func settle(_ first: ServiceEffects) -> [[UInt8]] {
            var out: [[UInt8]] = []
            var pending = [first]
            while let e = pending.popLast() {
                if !e.notifications.isEmpty { out.append(e.notifications.flatMap(\.bytes)) }
                if e.rebootRequested { resets += 1 }
                for w in e.work {
                    var next = effects()
                    server.workDone(tag: w.tag, device: &board.device, effects: &next)
                    pending.append(next)
                }
            }
            return out
        }

        mutating func send<R: SMPRequest>(_ request: R, version: SMPVersion = .v2, sequence: UInt8 = 7) throws
            -> SMPFrame
        {
            let bytes = try SMPFrame(request: request, version: version, sequence: sequence).encoded()
            var answers: [[UInt8]] = []
            var start = 0
            while start < bytes.count {
                answers += write(Array(bytes[start..<min(bytes.count, start + 244)]))
                start += 244
            }
            lastAnswer = answers.first
            return try SMPFrame(bytes: try #require(answers.first))
        }

        /// The board resets: MCUboot swaps or reverts, the server starts afresh.
        mutating func reboot() {
            server.runBootloader(device: &board.device)
            server.didBoot(device: board.device)
        }
    }

    @Test func reportsItsBuffersAndBootloader() throws {
        var bench = try Bench()
        let params = try bench.send(MCUmgrParametersRequest()).response(as: MCUmgrParametersResponse.self)
        #expect(params.bufferSize == 2475 && params.bufferCount == 4)
        let info = try bench.send(BootloaderInfoRequest()).response(as: BootloaderInfoResponse.self)
        #expect(info.bootloader == "MCUboot")
        let mode = try bench.send(BootloaderInfoRequest(query: "mode")).response(as: BootloaderInfoResponse.self)
        #expect(mode.mode == 3)
        let echo = try bench.send(EchoRequest(text: "hello")).response(as: EchoResponse.self)
        #expect(echo.text == "hello")
    }

    @Test func answersTheSlotListFromFlash() throws {
        var bench = try Bench()
        let (old, _) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        let state = try bench.send(ImageStateReadRequest()).response(as: ImageStateResponse.self)
        #expect(state.images.count == 1)
        #expect(
            state.images.first?.hash == old.hash && state.images.first?.active == true
                && state.images.first?.version == "1.0.0")
    }

    @Test func itsSlotsAreTheOnesTheClientTakesFromTheBoardProfile() {
        for family in ChipFamily.allCases {
            #expect(
                Int(SMPServerConfiguration.standard(for: family.layout).slotSize)
                    == McuMgrUpgradeImage.profileSlotSize(for: family))
        }
    }

    @Test func sendsGroupErrorsAsErrToV2AndAsRcToV1() throws {
        var bench = try Bench()
        let unknown = [UInt8](repeating: 0x42, count: 32)
        let v2 = try bench.send(ImageStateWriteRequest.test(hash: unknown), version: .v2)
        #expect(try v2.errorResponse() == .group(.image(.hashNotFound)))
        #expect(v2.header.version == .v2 && v2.header.sequence == 7 && v2.header.operation == .writeResponse)
        let v1 = try bench.send(ImageStateWriteRequest.test(hash: [1, 2, 3]), version: .v1)
        #expect(try v1.errorResponse() == .returnCode(.invalidValue))
        #expect(v1.header.version == .v1)
        // `img_mgmt_erase`: the running slot is in use; a slot the build does not have is invalid.
        let running = try bench.send(ImageEraseRequest(slot: 0))
        #expect(try running.errorResponse() == .group(.image(.noFreeSlot)))
        let missing = try bench.send(ImageEraseRequest(slot: 2))
        #expect(try missing.errorResponse() == .group(.image(.invalidSlot)))
    }

    @Test func rejectsAnUploadThatIsNotAnMCUbootImage() throws {
        var bench = try Bench()
        let answer = try bench.send(
            ImageUploadRequest.first(data: [UInt8](repeating: 0xAB, count: 64), imageLength: 64, sha: nil))
        #expect(try answer.errorResponse() == .group(.image(.invalidImageHeaderMagic)))
    }

    @Test func dropsTheDataOfAChunkAtTheWrongOffset() throws {
        var bench = try Bench()
        let (_, new) = try SMPFixture.images(magicAt: 0x20000, programLength: 0x1000)
        let first = try bench.send(
            ImageUploadRequest.first(
                data: Array(new.bytes[0..<1000]), imageLength: new.bytes.count, sha: new.fileSHA256))
        #expect(try first.response(as: ImageUploadResponse.self).offset == 1000)
        let skipped = try bench.send(ImageUploadRequest(offset: 2000, data: Array(new.bytes[2000..<3000])))
        #expect(try skipped.response(as: ImageUploadResponse.self).offset == 1000)
        // The same session's first chunk again: the device answers where it stands.
        let resumed = try bench.send(
            ImageUploadRequest.first(
                data: Array(new.bytes[0..<1000]), imageLength: new.bytes.count, sha: new.fileSHA256))
        #expect(try resumed.response(as: ImageUploadResponse.self).offset == 1000)
        #expect(bench.server.statistics.secondaryPageErases == 1)
    }

    @Test func answersAPayloadThatIsNotCBORWithEINVAL() throws {
        var bench = try Bench()
        // Read of mcumgr params, seq 9, with a 1-byte payload 0xFF (a stray CBOR break).
        let answers = bench.write([0x08, 0x00, 0x00, 0x01, 0x00, 0x00, 0x09, 0x06, 0xFF])
        let frame = try SMPFrame(bytes: try #require(answers.first))
        #expect(frame.header.sequence == 9 && frame.header.operation == .readResponse)
        #expect(try frame.errorResponse() == .returnCode(.invalidValue))
    }

    @Test func refusesAWriteThatCarriesTheStartOfTheNextFrame() throws {
        var bench = try Bench()
        let a = try SMPFrame(request: EchoRequest(text: "a"), sequence: 1).encoded()
        let b = try SMPFrame(request: EchoRequest(text: "b"), sequence: 2).encoded()
        #expect(bench.write(Array(a.prefix(8))).isEmpty)
        #expect(bench.write(Array(a.dropFirst(8)) + b).isEmpty)
        #expect(bench.server.statistics.refusedWrites == 1)
        // The partial frame is gone: the next frame is taken on its own.
        let answers = bench.write(b)
        #expect(answers.count == 1)
    }

    @Test func refusesFramesBeyondItsBuffersAndBufferSize() throws {
        var bench = try Bench()
        // A header declaring 3000 payload bytes exceeds buf_size.
        #expect(bench.write([0x0A, 0x00, 0x0B, 0xB8, 0x00, 0x00, 0x01, 0x00]).isEmpty)
        #expect(bench.server.statistics.refusedWrites == 1)
        // Four frames queued while the first is processed: the fourth finds no buffer.
        var e = bench.effects()
        for seq in 0..<4 {
            let frame = try SMPFrame(request: EchoRequest(text: "x"), sequence: UInt8(seq)).encoded()
            bench.server.didWrite(
                frame, to: SMPGATT.characteristic, kind: .command, device: &bench.board.device, effects: &e)
        }
        #expect(bench.server.statistics.refusedWrites == 2)
        #expect(bench.server.statistics.frames == 3)
    }

    @Test func modelsTheSwapTimeByItsFormula() throws {
        let config = SMPServerConfiguration.standard(for: SMPFixture.layout)
        let swap = config.swapDuration(pages: 10, pageErase: .milliseconds(85), wordWrite: .microseconds(41))
        #expect(swap == .microseconds(10 * 2 * (85_000 + 1024 * 41)))
        #expect(config.primarySlot == 0x1B000..<0x73000 && config.headerSize == 0x1000)
    }
}

@Suite struct SMPServerLowerBoundTests {
    @Test func fullDFUBoundIsTheLargerOfAirAndFlashPlusFixedCosts() {
        let timing = DeviceTiming.of(.nrf52833)
        func bound(dataLength: Int) -> Duration {
            LowerBound.fullDFU(
                imageBytes: 24_000, frameSize: 2475, frameOverhead: 25, attMTU: 247, dataLength: dataLength,
                pageSize: 4096, swap: .seconds(1), resetDelay: .milliseconds(250),
                profile: .deviceRequested, timing: timing)
        }
        // Fixed: two connection setups, four round trips of 2 CI, reset delay, reboot, swap.
        let fixed: Duration =
            .seconds(2) + .milliseconds(8 * 15) + .milliseconds(250) + .milliseconds(300) + .seconds(1)
        // DLE 251: 9 frames of 11 packets and one of 9 = 108 packets, 18 events = 270 ms of air;
        // the flash needs 6 erases (510 ms) and 6000 word writes (246 ms): the flash decides.
        #expect(bound(dataLength: 251) == fixed + .milliseconds(756))
        // Without DLE each 244-byte write takes 10 packets: 9 × 102 + (8 × 10 + 2) = 1000 packets,
        // 167 events = 2.505 s of air: the link decides.
        #expect(bound(dataLength: 27) == fixed + .microseconds(167 * 15_000))
    }
}
