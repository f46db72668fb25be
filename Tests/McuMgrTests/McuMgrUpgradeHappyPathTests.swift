import Testing
import SMP
import Transport
@testable import McuMgr

/// Splits the client's writes back into frames the way a reassembling device
/// does; fails the test when a write holds the end of one frame and the start of the next.
private func framesFromWrites(_ writes: [[UInt8]]) -> [[UInt8]] {
    var frames: [[UInt8]] = []
    var current: [UInt8] = []
    for write in writes {
        current += write
        guard current.count >= 8 else { continue }
        let total = 8 + (Int(current[2]) << 8 | Int(current[3]))
        #expect(current.count <= total, "a write crosses a frame boundary")
        if current.count >= total {
            frames.append(current)
            current = []
        }
    }
    #expect(current.isEmpty, "the writes end inside a frame")
    return frames
}

@Suite struct McuMgrUpgradeHappyPathTests {
    @Test func startsBySubscribingAndAskingForTheDeviceParameters() {
        var flow = McuMgrUpgrade(image: Fixture.image(size: 4000), options: McuMgrUpgradeOptions())
        let actions = flow.handle(.start(ConnectionInfo(services: [SMPGATT.service], mtu: 247)), now: .zero)
        #expect(actions.first == .subscribe(SMPGATT.characteristic))
        let writes = actions.compactMap {
            if case let .write(c, b, k) = $0, c == SMPGATT.characteristic, k == .command {
                return b
            } else {
                return nil
            }
        }
        // SMP v2 read, group 0, seq 0, command 6, payload A0 (docs/protocols/mcumgr-smp.md §1.2).
        #expect(writes == [[0x08, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0xA0]])
        #expect(actions.contains(.startTimer(McuMgrUpgrade.requestTimer, .seconds(10))))
    }

    @Test(arguments: McuMgrUpgradeMode.allCases)
    func upgradesInEveryModeWithReassemblyAndPipelining(mode: McuMgrUpgradeMode) throws {
        let image = Fixture.image(size: 60_000)
        var run = UpgradeRun(image: image, options: Fixture.options(mode), device: Fixture.device(for: image))
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())

        #expect(result.pipelineDepth == 3)
        #expect(run.maxInFlight == 3)
        #expect(result.frameLimit == 2475)
        #expect(result.bytesSent == image.bytes.count && result.resentBytes == 0 && result.retries == 0)
        #expect(run.writes.allSatisfy { $0.count <= 244 })
        let frames = framesFromWrites(run.writes)
        #expect(frames.allSatisfy { $0.count <= 2475 })
        // Upload frames fill the buffer: all but the last carry at least 2473 bytes.
        let uploadFrames = frames.filter { $0[4] == 0 && $0[5] == 1 && $0[7] == 1 }
        #expect(uploadFrames.dropLast().allSatisfy { $0.count >= 2473 })
        #expect(uploadFrames.count == result.chunks)
        #expect(run.device.reassemblyViolations == 0)

        switch mode {
        case .testAndConfirm, .confirmOnly:
            #expect(run.device.primary.bytes == image.bytes && run.device.primaryConfirmed)
        case .testOnly:
            #expect(run.device.primary.bytes == image.bytes && !run.device.primaryConfirmed)
        case .uploadOnly:
            #expect(run.device.secondary?.bytes == image.bytes && run.device.primary.hash == Fixture.runningHash)
        }
        let expectedPhases: [FlowPhase] =
            switch mode {
            case .testAndConfirm: [.upload, .test, .reset, .confirm, .verify, .done]
            case .confirmOnly: [.upload, .confirm, .reset, .verify, .done]
            case .testOnly: [.upload, .test, .reset, .verify, .done]
            case .uploadOnly: [.upload, .reset, .verify, .done]
            }
        #expect(run.phases == expectedPhases)
        #expect(run.device.resets == 1)
        #expect(result.finalSlots == run.device.slots)
    }

    @Test func keepsEveryFrameWithinOneWriteWithoutReassembly() throws {
        let image = Fixture.image(size: 20_000)
        var run = UpgradeRun(
            image: image, options: Fixture.options(depth: 1, reassembly: false), device: Fixture.device(for: image))
        run.device.reassembles = false
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.frameLimit == 244 && result.pipelineDepth == 1 && run.maxInFlight == 1)
        #expect(run.writes.allSatisfy { $0.count <= 244 })
        // Every write is one whole frame.
        #expect(run.writes.allSatisfy { $0.count == 8 + (Int($0[2]) << 8 | Int($0[3])) })
        #expect(run.device.reassemblyViolations == 0)
        #expect(result.chunks == run.device.uploads.count)
        #expect(result.chunks >= 20_000 / 223 && result.chunks <= 20_000 / 170 + 1)
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func pipelinesWithoutReassemblyAndReassemblesWithoutPipelining() throws {
        let image = Fixture.image(size: 30_000, seed: 3)
        var pipelined = UpgradeRun(
            image: image, options: Fixture.options(reassembly: false), device: Fixture.device(for: image))
        let outcomePipelined = pipelined.run()
        let a = try #require(try outcomePipelined?.get())
        #expect(a.pipelineDepth == 3 && a.frameLimit == 244 && pipelined.maxInFlight == 3)
        var reassembled = UpgradeRun(
            image: image, options: Fixture.options(depth: 1), device: Fixture.device(for: image))
        let outcomeReassembled = reassembled.run()
        let b = try #require(try outcomeReassembled?.get())
        #expect(b.pipelineDepth == 1 && b.frameLimit == 2475 && reassembled.maxInFlight == 1)
        #expect(b.chunks < a.chunks / 8)
        #expect(pipelined.device.primary.bytes == image.bytes && reassembled.device.primary.bytes == image.bytes)
    }

    @Test func toleratesADeviceWithoutTheParametersCommand() throws {
        let image = Fixture.image(size: 10_000)
        var device = Fixture.device(for: image)
        device.supportsParams = false
        var run = UpgradeRun(image: image, options: Fixture.options(), device: device)
        let outcomeRun = run.run()
        let result = try #require(try outcomeRun?.get())
        #expect(result.pipelineDepth == 1 && result.frameLimit == 244)
        #expect(run.writes.allSatisfy { $0.count == 8 + (Int($0[2]) << 8 | Int($0[3])) })
        #expect(run.told.contains(.parametersUnavailable(.notReported)))
        #expect(run.device.primary.bytes == image.bytes)
    }

    @Test func sameScriptGivesTheSameActions() throws {
        let image = Fixture.image(size: 25_000, seed: 9)
        var first = UpgradeRun(image: image, options: Fixture.options(), device: Fixture.device(for: image))
        first.lostNotifications = [7]
        var second = first
        _ = first.run()
        _ = second.run()
        #expect(first.actions == second.actions)
        #expect(first.now == second.now)
    }

    @Test func roundsChunksDownToTheByteAlignment() throws {
        let image = Fixture.image(size: 12_345, seed: 4)
        var options = Fixture.options()
        options.byteAlignment = 16
        var run = UpgradeRun(image: image, options: options, device: Fixture.device(for: image))
        let outcomeRun = run.run()
        _ = try #require(try outcomeRun?.get())
        #expect(run.device.uploads.dropLast().allSatisfy { $0.data.count % 16 == 0 && $0.offset % 16 == 0 })
        #expect(run.device.primary.bytes == image.bytes)
    }
}
