import ClassPage
import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory
import SampleFirmware
import SimulatedBoard
import Synchronization
import Testing

/// A real simulated class's events, drawn into the page's board views and sent as JSON.
@Suite struct PageMessageTests {
    /// Flashes `program` onto `count` fresh simulated boards through the library's `Flasher`, and
    /// returns its events in order and its results.
    static func flashClass(count: Int, runtime: SampleFirmware.RuntimeID, program: SampleFirmware.ProgramID) throws
        -> (events: [FlashEvent], results: [FlashResult])
    {
        let profile = SimProfile.default
        var sim = Simulation(link: .deviceRequested, adapters: [.unknown])
        let firmware = Firmware(
            fileName: "class.hex", format: .intelHex,
            sections: [
                .init(
                    family: profile.board.family,
                    image: SampleFirmware.image(family: profile.board.family, runtime: runtime, program: program),
                    warnings: [])
            ])
        let flasher = Flasher(.simulated(resume: nil))
        let plan = try flasher.plan(firmware, for: profile.board, described: "simulated")
        let entries: [SimulatedEntry] = try SimStore.names(count: count).enumerated().map { i, name in
            let board = try profile.makeBoard(
                holding: profile.factoryImage(), name: name, address: SimStore.address(i + 1))
            return (plan, sim.addBoard(board), name)
        }
        let events = Mutex<[FlashEvent]>([])
        let runs = flasher.flash(entries, in: &sim, onEvent: { e in events.withLock { $0.append(e) } }).runs
        return (events.withLock { $0 }, runs.map(\.result))
    }

    @Test func aPartialClassEndsWithEveryBoardVerifiedOnThePartialPath() throws {
        let (events, results) = try Self.flashClass(count: 3, runtime: .r1, program: .counter)
        var views = SimStore.names(count: 3).map { BoardView(name: $0, address: "", mode: "simulated") }
        for i in views.indices { views[i].queue() }
        var sawProgress = false
        for event in events {
            let i = try #require(views.firstIndex { $0.name == event.board })
            views[i].apply(event)
            if views[i].total > 0 { sawProgress = true }
            #expect(views[i].status == .working || views[i].status == .finished)
        }
        #expect(sawProgress)
        // Each session reported its end before the results came: each board shows it.
        #expect(views.allSatisfy { $0.status == .finished })
        #expect(
            ClassView.of(views, running: true, eta: nil, estimate: nil, estimateSeconds: nil).finished == 3)
        for result in results {
            let i = try #require(views.firstIndex { $0.name == result.board })
            views[i].apply(result)
        }
        #expect(views.allSatisfy { $0.status == .verified && $0.path == "partial" && $0.reason == nil })
        let view = ClassView.of(views, running: false, eta: nil, estimate: nil, estimateSeconds: nil)
        #expect(view.boards == 3 && view.verified == 3 && view.failed == 0 && view.waiting == 0)
    }

    @Test func aNewRuntimeShowsTheFullPathItsProtocolTook() throws {
        let (events, results) = try Self.flashClass(count: 2, runtime: .r2, program: .heart)
        var view = BoardView(name: "sim-1", address: "", mode: "simulated")
        view.queue()
        for event in events where event.board == "sim-1" { view.apply(event) }
        #expect(view.path == "full update")
        view.apply(try #require(results.first { $0.board == "sim-1" }))
        #expect(view.path == "McuMgr")
        #expect(view.status == .verified)
    }

    @Test func aBoardMessageIsOneLineOfJSONWithTheBoardAndTheClass() throws {
        let (events, _) = try Self.flashClass(count: 2, runtime: .r1, program: .counter)
        var view = BoardView(name: "sim-1", address: "F0:00:00:00:00:01", mode: "simulated")
        view.queue()
        let progress = try #require(
            events.first {
                guard $0.board == "sim-1", case .progress = $0.report else { return false }
                return $0.rate != nil
            })
        view.apply(progress)
        var counts = ClassView()
        counts.boards = 2
        counts.working = 1
        counts.waiting = 1
        counts.running = true
        let event = PageMessage.board(view, counts).event()
        #expect(event.hasPrefix("data: {") && event.hasSuffix("}\n\n"))
        #expect(event.dropLast(2).contains("\n") == false)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(event.dropFirst("data: ".count).utf8)) as? [String: Any])
        #expect(object["type"] as? String == "board")
        let board = try #require(object["board"] as? [String: Any])
        #expect(board["name"] as? String == "sim-1")
        #expect(board["status"] as? String == "working")
        guard case let .progress(done, total, _) = progress.report else { return }
        #expect(board["done"] as? Int == done && board["total"] as? Int == total)
        #expect((board["eta"] as? Double).map { $0 >= 0 } == true)
        let classObject = try #require(object["class"] as? [String: Any])
        #expect(classObject["working"] as? Int == 1 && classObject["running"] as? Bool == true)
    }

    @Test func aFailedResultCarriesItsReasonAndBeginsAgainWhenRetried() throws {
        // A real flasher's refusal of a board it cannot reach: a real failure's words.
        let flasher = Flasher(.simulated(resume: nil))
        let error = try #require(
            (try? flasher.flash(Firmware(fileName: "x.hex", format: .intelHex, sections: []), on: ["sim-1"])) == nil
                ? FlasherError.wrongBackend : nil)
        var view = BoardView(name: "sim-1", address: "", mode: "simulated")
        view.queue()
        view.apply(FlashResult(board: "sim-1", unreached: error, seconds: 1.5))
        #expect(view.status == .failed)
        #expect(view.reason == error.description)
        let json = PageMessage.board(
            view, ClassView.of([view], running: false, eta: nil, estimate: nil, estimateSeconds: nil)
        ).json()
        #expect(json.contains("\"status\":\"failed\""))
        #expect(json.contains("\"failed\":1"))
        view.queue()
        #expect(view.status == .waiting && view.reason == nil)
    }
}
