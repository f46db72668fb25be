import Diagnostics
import Foundation
import FirmwareImage
import PartialFlashingFrames

/// Saving and loading a simulated board, so it survives between runs of the tool.
///
/// The file is JSON: the profile, the mode, the key-value storage (also in its flash page;
/// listed for people), the runtime end and only the flash pages that are not blank (base64). Loading gives the board as it was
/// saved (same mode, same flags); RAM state of its services starts afresh.
extension SimulatedBoard {
    struct SavedBoard: Codable {
        static let formatName = "bitflash-simulated-board"
        var format: String
        var version: Int
        var profile: BoardProfile
        var mode: UInt8
        var storage: [String: Data]
        var runtimeEnd: UInt32
        var pages: [SavedPage]
        /// The Nordic bootloader's settings (absent in files of boards without one).
        var nordic: NordicBootloaderSettings?
    }

    struct SavedPage: Codable {
        var address: UInt32
        var data: Data
    }

    /// The board as a compact JSON document.
    public func encoded() throws -> Data {
        let flash = device.flash
        let pages = flash.nonBlankPages.compactMap { p -> SavedPage? in
            guard let bytes = try? flash.read(p..<(p + flash.pageSize)) else { return nil }
            return SavedPage(address: p, data: Data(bytes))
        }
        let saved = SavedBoard(
            format: SavedBoard.formatName, version: 1, profile: profile, mode: device.mode.rawValue,
            storage: device.storage.mapValues { Data($0) }, runtimeEnd: device.runtimeEnd, pages: pages,
            nordic: device.nordic == NordicBootloaderSettings() ? nil : device.nordic)
        return try JSONText.lineData(saved)
    }

    /// True when `data` is a saved board's file (of any version): a JSON object whose `format`
    /// is this file format's name. Other JSON files a user keeps beside the boards are not.
    public static func isSavedBoard(_ data: Data) -> Bool {
        struct Header: Decodable { var format: String }
        return (try? JSONDecoder().decode(Header.self, from: data))?.format == SavedBoard.formatName
    }

    /// A board from `encoded()` output.
    /// - Throws: `SimulatedBoardError.badStateFile` naming what is wrong.
    public init(encoded data: Data) throws {
        let saved: SavedBoard
        do {
            saved = try JSONDecoder().decode(SavedBoard.self, from: data)
        } catch {
            throw SimulatedBoardError.badStateFile("not a saved board (\(FoundationErrorText.describe(error)))")
        }
        guard saved.format == SavedBoard.formatName, saved.version == 1 else {
            throw SimulatedBoardError.badStateFile("format \(saved.format) version \(saved.version) is not supported")
        }
        guard let mode = BoardMode(rawValue: saved.mode) else {
            throw SimulatedBoardError.badStateFile("unknown mode \(saved.mode)")
        }
        let layout = saved.profile.layout
        var image = MemoryImage()
        for page in saved.pages {
            guard page.address % layout.pageSize == 0, page.data.count == Int(layout.pageSize),
                page.address < layout.flashSize
            else {
                throw SimulatedBoardError.badStateFile(
                    "page at \(Hex.number(page.address, uppercase: false)) does not fit the board's flash")
            }
            try? image.write([UInt8](page.data), at: page.address, overwrite: true)
        }
        let flash = try FlashMemory(layout: layout, image: image)
        var device = DeviceState(
            flash: flash, mode: mode, runtimeEnd: saved.runtimeEnd, layout: layout,
            runtime: saved.profile.runtime)
        // Files written before the store lived in flash list the keys only: put them in its page.
        for (key, value) in saved.storage.sorted(by: { $0.key < $1.key }) where device.storage[key] == nil {
            device.putKey(key, [UInt8](value))
        }
        device.nordic = saved.nordic ?? NordicBootloaderSettings()
        self.init(profile: saved.profile, device: device)
    }

    /// Writes the board to `url` (atomically).
    public func save(to url: URL) throws {
        try encoded().write(to: url, options: .atomic)
    }

    /// Reads a board saved with `save(to:)`.
    public static func load(from url: URL) throws -> SimulatedBoard {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SimulatedBoardError.badStateFile(
                "cannot read \(url.lastPathComponent): \(FoundationErrorText.describe(error))")
        }
        return try SimulatedBoard(encoded: data)
    }
}
