import BlueZFlashing
import FirmwareImage
import Flasher
import Flashing
import Foundation
import LinkModel

/// Real boards over BlueZ: the boards in range from a scan, flashed by the library's `Flasher`.
extension ClassRoom {
    /// Scans for the boards in range (`BlueZFlasher.scan`) and lists them, strongest first; when
    /// Bluetooth does not answer, the page says so and why. A board being flashed stays listed.
    public func scan(for duration: Duration = .seconds(4)) async {
        guard simulated == nil, !running, let bluez = flasher.bluez else { return }
        do {
            let found = try await bluez.scan(for: duration)
            bluetooth = PageState.Bluetooth(available: true)
            let known = Dictionary(boards.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
            boards = found.filter { $0.family != .other }.map { board in
                var view = known[board.address] ?? BoardView(name: "", address: board.address, mode: "")
                view.name = board.name ?? board.address
                view.mode = board.mode.rawValue
                view.signal = board.rssi
                return view
            }
        } catch {
            bluetooth = PageState.Bluetooth(
                available: false,
                problem: "Bluetooth is not available: \(error). Check that the computer has a Bluetooth "
                    + "adapter, that it is switched on (bluetoothctl power on) and that bluetoothd runs; then scan again."
            )
            boards = []
        }
        tellState()
    }

    /// The forecast of `count` real boards alike, each taking the path the file suggests, over
    /// BlueZ's default link and the adapters the flash will use (`ClassForecast.make`), with no
    /// board read first.
    func assumedForecast(_ firmware: Firmware, count: Int) async -> ClassForecast? {
        guard let bluez = flasher.bluez,
            let kind = Board.allCases.first(where: { firmware.problems(for: $0).isEmpty }),
            let plan = try? flasher.plan(firmware, for: kind, described: kind.displayName),
            let names = try? await bluez.adapters()
        else { return nil }
        let adapters = names.map {
            ClassEstimator.Adapter(
                name: $0 ?? "the first adapter", connectionLimit: bluez.settings.maxConnectionsPerAdapter)
        }
        return ClassForecast.make(
            plan: plan, options: flasher.options, count: count, link: .linuxDefault, mcuboot: nil, adapters: adapters)
    }

    /// Flashes the real boards of `names` (their addresses go to the flasher) and hands each update
    /// to the page.
    func runReal(firmware: Firmware, names: [String]) {
        let addresses = Dictionary(boards.map { ($0.name, $0.address) }, uniquingKeysWith: { a, _ in a })
        let nameOf = Dictionary(boards.map { ($0.address, $0.name) }, uniquingKeysWith: { a, _ in a })
        let queries = names.map { addresses[$0] ?? $0 }
        let flasher = flasher
        Task {
            do {
                for await update in try flasher.flash(firmware, on: queries) {
                    switch update {
                    case let .event(event):
                        apply(
                            FlashEvent(
                                board: nameOf[event.board] ?? event.board, elapsed: event.elapsed,
                                report: event.report, rate: event.rate))
                    case .warning:
                        break
                    case let .finished(finished):
                        var result = finished.result
                        result.board = nameOf[result.board] ?? result.board
                        apply(result)
                    }
                }
            } catch {
                bluetooth = PageState.Bluetooth(available: false, problem: "\(error)")
            }
            finish()
        }
    }
}
