import Diagnostics
import FirmwareImage
import Foundation
import SimulatedBoard

/// Where simulated boards live between runs: one JSON file per board in a state folder
/// (`--sim-state DIR`, else `$BITFLASH_SIM_STATE`, else `$XDG_STATE_HOME/bitflash/sim`,
/// else `~/.local/state/bitflash/sim`).
public struct SimStore: Sendable {
    public let directory: URL

    public init(option: String?) {
        let env = ProcessInfo.processInfo.environment
        if let option {
            directory = URL(fileURLWithPath: option)
        } else if let dir = env["BITFLASH_SIM_STATE"], !dir.isEmpty {
            directory = URL(fileURLWithPath: dir)
        } else if let xdg = env["XDG_STATE_HOME"], !xdg.isEmpty {
            directory = URL(fileURLWithPath: xdg).appendingPathComponent("bitflash/sim")
        } else {
            directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                ".local/state/bitflash/sim")
        }
    }

    /// The board names of a class set of `count` boards: `sim-1` … (`sim` alone for one board).
    public static func names(count: Int) -> [String] {
        count == 1 ? ["sim"] : (1...count).map { "sim-\($0)" }
    }

    public func url(of name: String) -> URL { directory.appendingPathComponent("\(name).json") }

    /// The saved board `name`, or nil when there is none yet.
    /// - Throws: `.notABoard` when the file of that name is not a board's (bitflash never
    ///   replaces it), `.unreadable` when it is a board's file that cannot be read.
    public func load(_ name: String) throws(SimStoreError) -> SimulatedBoard? {
        let url = url(of: name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard isBoardFile(url) else { throw .notABoard(path: url.path) }
        do {
            return try SimulatedBoard.load(from: url)
        } catch {
            throw .unreadable(path: url.path, reason: FoundationErrorText.describe(error))
        }
    }

    /// The kind of the saved board `name`, or nil when there is none (or it cannot be read: the
    /// load that follows says why).
    public func savedProfile(of name: String) -> SimProfile? {
        guard let board = try? load(name) else { return nil }
        return SimProfile(board: board.profile.board, mcuboot: board.profile.services.contains(.smp))
    }

    /// Throws `.notABoard` when a file holds the name of board `name` and is not a board's: a
    /// run that would save the board refuses before it starts.
    public func requireOwnFile(_ name: String) throws(SimStoreError) {
        let url = url(of: name)
        if FileManager.default.fileExists(atPath: url.path), !isBoardFile(url) { throw .notABoard(path: url.path) }
    }

    /// True for a saved board's file; false for anything else (a user's JSON file, a folder).
    func isBoardFile(_ url: URL) -> Bool {
        guard let data = try? Data(contentsOf: url) else { return false }
        return SimulatedBoard.isSavedBoard(data)
    }

    /// The saved board `name`, or a fresh board of `profile` holding the sample program.
    public func loadOrCreate(_ name: String, profile: SimProfile, index: Int) throws -> SimulatedBoard {
        if let board = try load(name) {
            if board.profile.board != profile.board || board.profile.services.contains(.smp) != profile.mcuboot {
                let saved = SimProfile(board: board.profile.board, mcuboot: board.profile.services.contains(.smp))
                throw SimStoreError.otherProfile(name: name, directory: directory.path, saved: saved, wanted: profile)
            }
            return board
        }
        return try profile.makeBoard(holding: profile.factoryImage(), name: name, address: Self.address(index))
    }

    public func save(_ board: SimulatedBoard, as name: String) throws(SimStoreError) {
        try requireOwnFile(name)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try board.save(to: url(of: name))
        } catch {
            throw .cannotSave(path: url(of: name).path, reason: FoundationErrorText.describe(error))
        }
    }

    /// The saved boards' names, sorted: the `.json` files that are boards' (other files in the
    /// folder are the user's and are left alone).
    public func savedNames() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") && isBoardFile(directory.appendingPathComponent($0)) }
            .map { String($0.dropLast(5)) }.sorted()
    }

    public static func address(_ index: Int) -> String {
        "F0:0D:00:00:" + Hex.bytes([UInt8((index >> 8) & 0xFF), UInt8(index & 0xFF)], separator: ":")
    }
}

/// Why the simulated boards' folder could not be used. The messages name no command: the
/// command line adds how to start afresh.
public enum SimStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A saved board's file could not be read.
    case unreadable(path: String, reason: String)
    /// A file has a board's name but is not a board's: bitflash neither reads nor replaces it.
    case notABoard(path: String)
    /// The saved board is of another kind than the one asked for.
    case otherProfile(name: String, directory: String, saved: SimProfile, wanted: SimProfile)
    /// A board could not be saved.
    case cannotSave(path: String, reason: String)
    /// The image holds no application for the board (an MCUboot board needs one for its slot).
    case noApplication(Board)

    public var description: String {
        switch self {
        case let .unreadable(path, reason): return "\(path): \(reason)"
        case let .notABoard(path):
            return "\(path) is not a simulated board's file, so bitflash leaves it as it is: "
                + "move it out of the folder, or keep the simulated boards in another one"
        case let .otherProfile(name, directory, saved, wanted):
            return "the simulated board '\(name)' in \(directory) is a \(saved), not a \(wanted)"
        case let .cannotSave(path, reason): return "cannot save the simulated board to \(path): \(reason)"
        case let .noApplication(board): return "the file holds no application for \(board.displayName)"
        }
    }
}

extension SimStoreError: DomainError {
    public var failureKind: FailureKind {
        switch self {
        case .unreadable: return .unreadable
        case .otherProfile: return .invalidRequest
        case .cannotSave, .notABoard: return .unwritable
        case .noApplication: return .badFirmware
        }
    }
}
