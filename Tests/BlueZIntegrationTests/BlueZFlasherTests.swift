import BlueZFlashing
import FirmwareImage
import Flashing
import Foundation
import PartialFlashingFrames
import SimulatedBoard
import Synchronization
import Testing
import TestSupport
import Transport

/// The library API for real boards (`BlueZFlashing`), in this process, against the fake BlueZ
/// (`bitflash-lab sim bluez`) on a private bus; and the sample that uses it.
@Suite(
    .serialized,
    .enabled(if: Bitflash.available, "dbus-daemon or the bitflash binary missing: BlueZ integration tests skipped"))
struct BlueZFlasherTests {
    typealias C = BlueZCommandTests

    static func firmware(_ name: String) throws -> Firmware {
        try Firmware.parse(Array(try Data(contentsOf: C.sample(name))), fileName: name)
    }

    /// Settings for the fake's bus, with resume records in a fresh folder.
    static func settings(_ fake: FakeBlueZProcess) -> (BlueZFlashSettings, FileResumeStore) {
        var settings = BlueZFlashSettings()
        settings.busAddress = fake.bus.address
        settings.scanTimeout = .seconds(5)
        let store = FileResumeStore(directory: fake.bus.directory.appendingPathComponent("resume"))
        settings.resumeStore = store
        settings.lastBoard = LastBoardStore(file: fake.bus.directory.appendingPathComponent("last-board.json"))
        return (settings, store)
    }

    /// Runs the sample `sample-flash-bluez` against `fake`, off the cooperative pool: its status
    /// and standard output.
    static func runSample(_ arguments: [String], on fake: FakeBlueZProcess) async throws -> (Int32, String) {
        let binary = try #require(
            Bitflash.url?.deletingLastPathComponent().appendingPathComponent("sample-flash-bluez"))
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "sample-flash-bluez is not built")
        let environment = ProcessInfo.processInfo.environment.merging(
            ["DBUS_SYSTEM_BUS_ADDRESS": fake.bus.address, "BITFLASH_STATE": fake.bus.directory.path]) { $1 }
        return try await FakeBlueZProcess.offPool { () throws -> (Int32, String) in
            let p = Process()
            p.executableURL = binary
            p.arguments = arguments
            p.environment = environment
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            return (p.terminationStatus, text)
        }
    }

    @Test("scan finds the board; flash reports phases and progress in order, then one verified result")
    func scanAndFlash() async throws {
        let fake = try FakeBlueZProcess()
        var (settings, store) = Self.settings(fake)
        // The phases of partial flashing: on a busy machine the fake's measured link can be slow
        // enough for the estimate to prefer a full update, so partial flashing is asked for.
        settings.options.prefer = .partial
        let flasher = BlueZFlasher(settings: settings)
        let found = try await flasher.scan(for: .seconds(20), until: .board("zotig"))
        #expect(BlueZFlasher.missing(.board("zotig"), in: found) == nil)
        #expect(found.map(\.address) == [FakeBlueZProcess.address])
        #expect(found.first?.name == FakeBlueZProcess.name)
        #expect(found.first?.family == .microbit)
        #expect(BlueZFlasher.missing(.boards(2), in: found) == "1 of 2 boards seen")

        var phases: [FlowPhase] = []
        var progress: [Int] = []
        var finished: [BoardFlashResult] = []
        for await update in flasher.flash(try Self.firmware("sample-r1-counter.hex"), on: ["zotig"]) {
            switch update {
            case let .event(e):
                #expect(e.board == "zotig")
                if case let .phase(p) = e.report { phases.append(p) }
                if case let .progress(done, _, _) = e.report { progress.append(done) }
            case let .warning(_, message):
                Issue.record("unexpected warning: \(message)")
            case let .finished(r):
                finished.append(r)
            }
        }
        #expect(phases.first == .connecting && phases.contains(.partial) && phases.last == .done)
        #expect(progress == progress.sorted() && !progress.isEmpty)
        let result = try #require(finished.first)
        #expect(finished.count == 1)
        #expect(result.succeeded && result.result.verified && result.result.path == .partial)
        #expect(result.address == FakeBlueZProcess.address)
        #expect(try store.load(board: FakeBlueZProcess.address) == nil, "a finished flash leaves no record")
        try C.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("cancelling the task stops the flash cleanly with a resume record; the next flash continues from it")
    func cancellationLeavesAResumeRecord() async throws {
        let fake = try FakeBlueZProcess()
        let (settings, store) = Self.settings(fake)
        let flasher = BlueZFlasher(settings: settings)
        let firmware = try Self.firmware("sample-r1-counter.hex")
        let saw = Mutex<[BoardFlashResult]>([])
        let task = Task {
            for await update in flasher.flash(firmware, on: [FakeBlueZProcess.address]) {
                switch update {
                case let .event(e):
                    // Stop once the flash has saved a point past the first page.
                    if case let .checkpoint(point?) = e.report, (point.resumePoint?.block ?? 0) > 0 {
                        withUnsafeCurrentTask { $0?.cancel() }
                    }
                case .warning: break
                case let .finished(r): saw.withLock { $0.append(r) }
                }
            }
        }
        await task.value
        let stopped = try #require(saw.withLock { $0 }.first)
        #expect(!stopped.succeeded)
        #expect(stopped.result.error?.contains("cancelled") == true, "\(stopped.result.error ?? "")")
        let record = try #require(try store.load(board: FakeBlueZProcess.address))
        #expect(record.block > 0)
        // The board kept what it received: the next flash continues at the saved block.
        var resumed: BoardFlashResult?
        var notes: [String] = []
        for await update in flasher.flash(firmware, on: [FakeBlueZProcess.address]) {
            if case let .finished(r) = update { resumed = r }
            if case let .event(e) = update, case let .note(text) = e.report.worded { notes.append(text) }
        }
        #expect(!notes.contains { $0.contains("not continuing") }, "\(notes)")
        let result = try #require(resumed)
        #expect(result.succeeded && result.result.path == .partial, "\(result.result.error ?? "")")
        #expect(result.result.reason.details?.resumedAtBlock == record.block + 1)
        #expect(try store.load(board: FakeBlueZProcess.address) == nil)
        try C.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test("several boards at once: one finished result each, in any order")
    func severalBoards() async throws {
        let fake = try FakeBlueZProcess(
            scenario: """
                {"boards": [{"name": "BBC micro:bit [zotig]", "address": "F0:0D:00:00:00:01"},
                            {"name": "BBC micro:bit [vavit]", "address": "F0:0D:00:00:00:02"}]}
                """)
        let flasher = BlueZFlasher(settings: Self.settings(fake).0)
        var results: [String: BoardFlashResult] = [:]
        for await update in flasher.flash(try Self.firmware("sample-r1-counter.hex"), on: ["zotig", "vavit"]) {
            if case let .finished(r) = update { results[r.board] = r }
        }
        #expect(Set(results.keys) == ["zotig", "vavit"])
        #expect(results.values.allSatisfy { $0.succeeded && $0.result.path == .partial })
    }

    @Test("the sample finds the board by name and flashes the file, with a progress line")
    func sample() async throws {
        let fake = try FakeBlueZProcess()
        let file = C.sample("sample-r1-counter.hex").path
        let (status, text) = try await Self.runSample(["zotig", file], on: fake)
        #expect(status == 0, "\(text)")
        #expect(
            text.contains(
                "flashing \(C.sample("sample-r1-counter.hex").path) onto BBC micro:bit [zotig] (F0:0D:00:00:00:01)"))
        #expect(text.contains("\rpartial              100%"), "\(text)")
        #expect(text.contains("partial in ") && text.contains("verified: true"), "\(text)")
        try C.expectBoardHolds("sample-r1-counter.hex", stateFile: fake.stop())
    }

    @Test(
        "the sample refuses the nRF52840 SoftDevice UF2 with the command line's words, and the board keeps its program",
        .enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.skipMessage)))
    func sampleRefusesAnotherChipsFileAsTheCommandLineDoes() async throws {
        let fake = try FakeBlueZProcess()
        let file = Corpus.testdata.appendingPathComponent("real/uf2-nrf52840-s140-softdevice-6.1.1.uf2").path
        let (status, text) = try await Self.runSample(["zotig", file], on: fake)
        let cli = try await Bitflash.runAsync(["flash", file, "--device", "zotig"], bus: fake.bus.address)
        #expect(cli.status == 65 && status == 65, "command line \(cli.status), sample \(status): \(text)")
        let words = try #require(
            cli.stderr.split(separator: "\n").first { $0.hasPrefix("bitflash: error: ") }?
                .dropFirst("bitflash: error: ".count))
        #expect(words.contains("is not for a micro:bit V2: the UF2 blocks name chip family 0xADA52840"), "\(words)")
        #expect(text.contains("failed: \(words)"), "the sample says: \(text)\nthe command line: \(words)")
        #expect(!text.contains("verified: true"))
        try C.expectBoardHolds("sample-r1-heart.hex", stateFile: fake.stop())
    }
}
