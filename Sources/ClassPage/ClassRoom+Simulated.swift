import FirmwareImage
import Flasher
import Flashing
import Foundation
import Laboratory
import LinkModel
import SimulatedBoard
import SimulatedFlashing
import Synchronization

/// A simulated class for the page (`bitflash serve --simulate --boards N`): fresh boards of one
/// kind in memory, holding the sample program a fresh simulated board holds, sharing the
/// simulated adapter, flashed by the library's `Flasher` on modelled time. The page plays that
/// time `speed` times faster than real time, so that its progress moves as a real class's would.
public struct SimulatedClass: Sendable {
    public var profile: SimProfile
    /// Modelled seconds played per real second (1: real speed).
    public var speed: Double
    var simulation: Simulation
    var ids: [String: BoardID] = [:]
    var names: [String] = []

    /// `count` fresh boards of `profile`, named `sim-1` … as `bitflash flash --simulate` names them.
    /// - Parameter bluetoothOff: how many of them, the last ones, run a program that keeps
    ///   Bluetooth off (a MakeCode program without the Bluetooth extension: `SimProfile.makeBoard`),
    ///   so that their flash fails as a real one would, and the page shows a failure and its retry.
    public init(
        profile: SimProfile, count: Int, link: LinkProfile = .deviceRequested, speed: Double = 1, bluetoothOff: Int = 0
    ) throws {
        self.profile = profile
        self.speed = speed
        simulation = Simulation(link: link, adapters: [.unknown])
        for (i, name) in SimStore.names(count: count).enumerated() {
            let board = try profile.makeBoard(
                holding: profile.factoryImage(), name: name, address: SimStore.address(i + 1),
                applicationBluetooth: i < count - bluetoothOff)
            ids[name] = simulation.addBoard(board)
            names.append(name)
        }
    }

    /// The boards as the page lists them.
    func views() -> [BoardView] {
        names.map { name in
            let address = ids[name].flatMap { try? simulation.board($0).profile.address } ?? ""
            return BoardView(name: name, address: address, mode: "simulated")
        }
    }

    /// The entries of a flash of `names`: the file planned for the boards' kind by the policy.
    func entries(_ firmware: Firmware, _ names: [String], flasher: Flasher) throws(FileRefusal) -> [SimulatedEntry] {
        let plan: FlashPlan
        do {
            plan = try flasher.plan(firmware, for: profile.board, described: "simulated \(profile.board.displayName)")
        } catch { throw FileRefusal(message: "\(error)") }
        return names.compactMap { name in ids[name].map { (plan, $0, name) } }
    }

    /// The class's forecast, each board's path read from it first (`Flasher.forecast`).
    func forecast(_ firmware: Firmware, _ names: [String], flasher: Flasher) throws(FileRefusal) -> ClassForecast? {
        let entries = try entries(firmware, names, flasher: flasher)
        do { return try flasher.forecast(entries[0].plan, boards: entries, in: simulation) } catch {
            throw FileRefusal(message: "\(error)")
        }
    }
}

/// What the simulation's thread hands the page's state, in order.
enum SimulatedRunItem: Sendable {
    case event(FlashEvent)
    case result(FlashResult)
    /// The boards as the flash left them, for the next flash.
    case ended(Simulation)
}

extension ClassRoom {
    /// Runs the flash on a thread of its own (the simulation computes and, to play modelled time at
    /// `speed`, waits between events; it must not hold the server's threads), its events handed
    /// over in order.
    func runSimulated(_ simulated: SimulatedClass, firmware: Firmware, names: [String]) {
        let entries: [SimulatedEntry]
        do { entries = try simulated.entries(firmware, names, flasher: flasher) } catch {
            finish()
            return
        }
        let (stream, continuation) = AsyncStream<SimulatedRunItem>.makeStream()
        let flasher = flasher
        let speed = simulated.speed
        let before = simulated.simulation
        let thread = Thread {
            var simulation = before
            let pacer = ModelledTimePacer(speed: speed)
            let (runs, _) = flasher.flash(entries, in: &simulation) { event in
                pacer.wait(until: event.elapsed)
                continuation.yield(.event(event))
            }
            for run in runs { continuation.yield(.result(run.result)) }
            continuation.yield(.ended(simulation))
            continuation.finish()
        }
        thread.start()
        Task {
            for await item in stream {
                switch item {
                case let .event(event): apply(event)
                case let .result(result): apply(result)
                case let .ended(simulation): self.simulated?.simulation = simulation
                }
            }
            finish()
        }
    }
}

/// Holds each event of a simulation back until as much real time has passed as the modelled time
/// since the first event, divided by the speed. It decides only when the page hears of an event,
/// never what happens.
final class ModelledTimePacer: Sendable {
    let speed: Double
    private let first = Mutex<(real: ContinuousClock.Instant, modelled: Duration)?>(nil)

    init(speed: Double) { self.speed = speed }

    func wait(until modelled: Duration) {
        guard speed > 0 else { return }
        let start = first.withLock { first in
            if first == nil { first = (ContinuousClock.now, modelled) }
            return first!
        }
        let first = start
        let due = first.real + (modelled - first.modelled) / speed
        let now = ContinuousClock.now
        if due > now { Thread.sleep(forTimeInterval: (due - now).seconds) }
    }
}
