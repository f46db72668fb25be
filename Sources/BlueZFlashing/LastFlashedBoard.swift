import Diagnostics
import Flashing
import Foundation

/// The board this computer flashed last, so that a flash without a named board flashes that
/// board again, never a board nobody chose.
public struct LastFlashedBoard: Codable, Sendable, Equatable {
    /// Its Bluetooth address: what a flash connects to.
    public var address: String
    /// Its advertised name when it was flashed (`BBC micro:bit [zotig]`).
    public var name: String?
    /// When it was flashed.
    public var when: Date

    public init(address: String, name: String?, when: Date = Date()) {
        self.address = address
        self.name = name
        self.when = when
    }

    /// `BBC micro:bit [zotig] (F0:0D:…)`, or the address alone.
    public var described: String { name.map { "\($0) (\(address))" } ?? address }
}

/// Where the last board is kept: `last-board.json` in bitflash's state folder (beside the resume
/// records: `$BITFLASH_STATE`, else `$XDG_STATE_HOME/bitflash`, else `~/.local/state/bitflash`).
public struct LastBoardStore: Sendable {
    public let file: URL

    public init(file: URL) { self.file = file }

    /// The store in the standard state folder.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> LastBoardStore
    {
        let folder = FileResumeStore.standard(environment: environment).directory.deletingLastPathComponent()
        return LastBoardStore(file: folder.appendingPathComponent("last-board.json"))
    }

    /// The board kept, or nil when there is none or the file is not one (never trusted then).
    public func load() -> LastFlashedBoard? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(LastFlashedBoard.self, from: data)
    }

    /// Keeps `board` as the last one, atomically.
    public func save(_ board: LastFlashedBoard) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(board).write(to: file, options: .atomic)
        } catch {
            throw ResumeStoreError.cannotSave(path: file.path, reason: "\(error)")
        }
    }
}

/// What a flash without a named board does (`BlueZFlasher.defaultTarget()`).
public enum DefaultTarget: Sendable, Equatable {
    /// The board this computer flashed last is in range: flash it.
    case lastBoard(LastFlashedBoard)
    /// No board to take on its own: the boards in range to choose from, and the last board,
    /// when one is kept but was not seen.
    case choose(inRange: [FoundBoard], lastBoard: LastFlashedBoard?)
}

extension BlueZFlasher {
    /// The board a flash without a named board takes: the one this computer flashed last when a
    /// scan sees it, else none (with the boards in range, to choose from). Never a board nobody
    /// chose: a program, a class set or a command line names its boards or flashes this one.
    /// - Throws: `BlueZError` when Bluetooth is not available.
    public func defaultTarget() async throws -> DefaultTarget {
        guard let last = settings.lastBoard?.load() else {
            return .choose(inRange: try await scan(), lastBoard: nil)
        }
        let seen = try await scan(until: .board(last.address))
        if Self.missing(.board(last.address), in: seen) == nil { return .lastBoard(last) }
        return .choose(inRange: seen, lastBoard: last)
    }
}
