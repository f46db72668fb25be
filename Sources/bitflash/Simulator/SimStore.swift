import Foundation
import SimulatedBoard

/// Where simulated boards live between runs: one JSON file per board in a state folder
/// (`--sim-state DIR`, else `$BITFLASH_SIM_STATE`, else `$XDG_STATE_HOME/bitflash/sim`,
/// else `~/.local/state/bitflash/sim`).
struct SimStore {
    let directory: URL

    init(option: String?) {
        let env = ProcessInfo.processInfo.environment
        if let option {
            directory = URL(fileURLWithPath: option)
        } else if let dir = env["BITFLASH_SIM_STATE"], !dir.isEmpty {
            directory = URL(fileURLWithPath: dir)
        } else if let xdg = env["XDG_STATE_HOME"], !xdg.isEmpty {
            directory = URL(fileURLWithPath: xdg).appendingPathComponent("bitflash/sim")
        } else {
            directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state/bitflash/sim")
        }
    }

    /// The board names of a class set of `count` boards: `sim-1` … (`sim` alone for one board).
    static func names(count: Int) -> [String] {
        count == 1 ? ["sim"] : (1...count).map { "sim-\($0)" }
    }

    func url(of name: String) -> URL { directory.appendingPathComponent("\(name).json") }

    /// The saved board `name`, or nil when there is none yet.
    func load(_ name: String) throws -> SimulatedBoard? {
        let url = url(of: name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try SimulatedBoard.load(from: url)
        } catch {
            throw CLIError(.cannotRead, "\(url.path): \(error); run `bitflash sim reset` to start this board afresh")
        }
    }

    /// The saved board `name`, or a fresh board of `profile` holding the sample program.
    func loadOrCreate(_ name: String, profile: SimProfile, index: Int) throws -> SimulatedBoard {
        if let board = try load(name) {
            if board.profile.board != profile.board || board.profile.services.contains(.smp) != profile.mcuboot {
                let saved = SimProfile(board: board.profile.board, mcuboot: board.profile.services.contains(.smp))
                throw CLIError(.usage, "the simulated board '\(name)' in \(directory.path) is a \(saved), not a \(profile): "
                                   + "run `bitflash sim reset --profile \(profile)` first, or use --simulate \(saved)")
            }
            return board
        }
        return try profile.makeBoard(holding: profile.factoryImage(), name: name, address: Self.address(index))
    }

    func save(_ board: SimulatedBoard, as name: String) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try board.save(to: url(of: name))
        } catch {
            throw CLIError(.cannotWrite, "cannot save the simulated board to \(url(of: name).path): \(error)")
        }
    }

    /// The saved boards' names, sorted.
    func savedNames() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    static func address(_ index: Int) -> String {
        String(format: "F0:0D:00:00:%02X:%02X", (index >> 8) & 0xFF, index & 0xFF)
    }
}
