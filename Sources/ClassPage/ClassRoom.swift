import FirmwareImage
import Flasher
import Flashing
import Foundation

/// The class page's one state: the file, the boards in range, the flash that runs, and the pages
/// listening. Every route goes through it, so one flash runs at a time and a board is never in
/// two flashes at once. The flashing itself is the library's `Flasher`'s (simulated boards in
/// ClassRoom+Simulated.swift, real ones in ClassRoom+BlueZ.swift); this only words and shows it.
public actor ClassRoom {
    /// Where the boards are.
    public enum Boards: Sendable {
        /// A simulated class, flashed on modelled time played `speed` times faster than real time.
        case simulated(SimulatedClass)
        /// Real boards in range over BlueZ.
        case bluez
    }

    let flasher: Flasher
    let kind: Boards
    var simulated: SimulatedClass?
    var boards: [BoardView] = []
    var firmware: Firmware?
    var summary: FileSummary?
    var bluetooth = PageState.Bluetooth(available: true)
    var running = false
    var estimate: (words: String, seconds: Double)?
    /// When the running flash started, and the class time it was expected to take.
    var started: ContinuousClock.Instant?
    var listeners: [Int: AsyncStream<String>.Continuation] = [:]
    var nextListener = 0

    public init(flasher: Flasher, boards: Boards) {
        self.flasher = flasher
        kind = boards
        if case let .simulated(simulated) = boards {
            self.simulated = simulated
            self.boards = simulated.views()
        }
    }

    /// The page's whole state.
    public func state() -> PageState {
        PageState(
            bluetooth: bluetooth, file: summary, boards: boards, class: classView(),
            backend: simulated == nil ? "bluez" : "simulated")
    }

    func classView() -> ClassView {
        var eta: Double?
        if let started, let estimate {
            let left = estimate.seconds - (ContinuousClock.now - started).seconds * (simulated?.speed ?? 1)
            let slowest = boards.compactMap(\.eta).max() ?? 0
            eta = max(left, slowest, 0)
        }
        return ClassView.of(
            boards, running: running, eta: eta, estimate: estimate?.words, estimateSeconds: estimate?.seconds)
    }

    /// A stream of Server-Sent Events for one page: the whole state first, then every change.
    public func listen() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = nextListener
        nextListener += 1
        listeners[id] = continuation
        continuation.yield(PageMessage.state(state()).event())
        continuation.onTermination = { _ in Task { await self.forget(id) } }
        return stream
    }

    func forget(_ id: Int) { listeners[id] = nil }

    func tell(_ message: PageMessage) {
        let text = message.event()
        for listener in listeners.values { listener.yield(text) }
    }

    func tellState() { tell(.state(state())) }

    /// Reads a file the page was given, in memory; a refusal leaves the file before it in place.
    public func load(_ bytes: [UInt8], name given: String?) throws(FileRefusal) -> FileSummary {
        guard !running else { throw FileRefusal(message: "a class is being flashed: give the file once it has ended") }
        let name = FileCheck.displayName(given)
        let kinds = simulated.map { [$0.profile.board] } ?? []
        switch FileCheck.read(bytes, name: name, flasher: flasher, kinds: kinds) {
        case let .failure(refusal):
            throw refusal
        case let .success((firmware, summary)):
            self.firmware = firmware
            self.summary = summary
            estimate = nil
            tellState()
            return summary
        }
    }

    /// The boards of `names`, each once, in the page's order; a refusal names one not in range.
    func chosen(_ names: [String]) throws(FileRefusal) -> [String] {
        let known = Set(boards.map(\.name))
        if let unknown = names.first(where: { !known.contains($0) }) {
            throw FileRefusal(message: "\(unknown) is not in range: choose among the boards listed")
        }
        guard !names.isEmpty else { throw FileRefusal(message: "no board chosen: choose one or more boards") }
        let wanted = Set(names)
        return boards.map(\.name).filter { wanted.contains($0) }
    }

    /// The class estimate for the boards of `names` before they are flashed, as `bitflash flash`
    /// estimates a class: each board's path read from it first. Real boards are read only with
    /// `readBoards` (a connection to each: at the start, not at each change of the choice); without
    /// it every board is assumed to take the path the file suggests (`assumedForecast`).
    public func estimate(_ names: [String], readBoards: Bool = false) async throws(FileRefusal) -> String? {
        guard let firmware else { throw FileRefusal(message: "no file yet: give a firmware file first") }
        let names = try chosen(names)
        let forecast: ClassForecast?
        if let simulated {
            forecast = try simulated.forecast(firmware, names, flasher: flasher)
        } else if readBoards {
            forecast = await flasher.forecastRealClass(firmware, boards: names)
        } else {
            forecast = await assumedForecast(firmware, count: names.count)
        }
        guard let forecast else {
            estimate = nil
            return nil
        }
        let seconds = forecast.estimate.classTime.seconds
        let paths = forecast.paths.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let words = "\(names.count) boards, about \(Self.time(seconds)) (\(paths))"
        estimate = (words, seconds)
        tellState()
        return words
    }

    /// Starts a flash of the boards of `names` (a class, a retry of one board or of the failed ones).
    /// Refused while another runs: one flash at a time, so no board is ever in two.
    public func start(_ names: [String]) async throws(FileRefusal) {
        guard !running else { throw FileRefusal(message: "a flash is running: wait for it to end") }
        guard bluetooth.available else {
            throw FileRefusal(message: bluetooth.problem ?? "Bluetooth is not available")
        }
        guard let firmware else { throw FileRefusal(message: "no file yet: give a firmware file first") }
        let names = try chosen(names)
        if names.count > 1 { _ = try await estimate(names, readBoards: true) }
        if names.count < 2 { estimate = nil }
        running = true
        started = ContinuousClock.now
        let wanted = Set(names)
        for i in boards.indices where wanted.contains(boards[i].name) { boards[i].queue() }
        tellState()
        if let simulated {
            runSimulated(simulated, firmware: firmware, names: names)
        } else {
            runReal(firmware: firmware, names: names)
        }
    }

    /// One board's event.
    func apply(_ event: FlashEvent) {
        guard let i = boards.firstIndex(where: { $0.name == event.board }) else { return }
        boards[i].apply(event)
        tell(.board(boards[i], classView()))
    }

    /// One board's result.
    func apply(_ result: FlashResult) {
        guard let i = boards.firstIndex(where: { $0.name == result.board }) else { return }
        boards[i].apply(result)
        tell(.board(boards[i], classView()))
    }

    /// The flash has ended.
    func finish() {
        running = false
        started = nil
        tellState()
    }

    /// `1 min 12 s`, `48 s`.
    static func time(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 60 ? "\(s / 60) min \(s % 60) s" : "\(s) s"
    }
}
