import FirmwareImage
import Flashing
import SampleFirmware

/// One situation the flash benchmark measures: what the board runs, and what is flashed onto it.
public struct BenchScenario: Sendable {
    /// What the scenario stands for.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The edit loop: the board runs program A, program B with the same runtime is flashed.
        case edit
        /// The board runs another runtime: auto must choose a full update.
        case newRuntime = "new-runtime"
        /// The same file again: nothing needs writing.
        case upToDate = "up-to-date"
    }

    /// Short and unique, e.g. `V2 small-heart → beating-heart`.
    public var name: String
    public var kind: Kind
    public var board: Board
    /// The firmware whose application the board runs before the flash.
    public var running: Firmware
    /// The firmware that is flashed.
    public var update: Firmware
    /// Where the files come from: `corpus` (real MakeCode files) or `samples` (the project's own).
    public var source: String

    public init(name: String, kind: Kind, board: Board, running: Firmware, update: Firmware, source: String) {
        self.name = name
        self.kind = kind
        self.board = board
        self.running = running
        self.update = update
        self.source = source
    }
}

extension BenchScenario {
    /// The scenarios of the real-firmware corpus. `read` returns the bytes of a corpus file
    /// (e.g. `real/makecode-universal-8.0.18-small-heart.hex`), or nil when it is absent;
    /// scenarios whose files are missing are left out.
    public static func corpus(read: (String) -> [UInt8]?) -> [BenchScenario] {
        func load(_ name: String) -> Firmware? {
            guard let bytes = read("real/" + name) else { return nil }
            return try? Firmware.parse(bytes, fileName: name)
        }
        var out: [BenchScenario] = []
        let heart18 = load("makecode-universal-8.0.18-small-heart.hex")
        let beating = load("makecode-universal-8.0.11-beating-heart.hex")
        let counter = load("makecode-universal-8.0.18-serial-counter.hex")
        let heart3 = load("makecode-universal-3.0.68-small-heart.hex")
        let meet = load("makecode-universal-meet-the-microbit.hex")
        for (board, tag) in [(Board.microbitV2, "V2"), (.microbitV1, "V1")] {
            if let a = heart18, let b = beating {
                out.append(
                    .init(
                        name: "\(tag) small-heart → beating-heart", kind: .edit, board: board, running: a, update: b,
                        source: "corpus"))
            }
            if let a = heart18, let b = counter {
                out.append(
                    .init(
                        name: "\(tag) small-heart → serial-counter", kind: .edit, board: board, running: a, update: b,
                        source: "corpus"))
            }
            if let m = meet, let other = otherProgram(m, board: board) {
                out.append(
                    .init(
                        name: "\(tag) meet-the-microbit", kind: .edit, board: board, running: other, update: m,
                        source: "corpus"))
            }
        }
        for (file, board, tag) in [
            ("calliope-mini3-makecode-8.1.11-demo.hex", Board.calliopeMini3, "Calliope 3"),
            ("calliope-mini12-makecode-8.1.11-demo-classic.hex", .calliopeMini2, "Calliope 1/2")
        ] {
            if let f = load(file), let other = otherProgram(f, board: board) {
                out.append(
                    .init(name: "\(tag) demo", kind: .edit, board: board, running: other, update: f, source: "corpus"))
            }
        }
        for (board, tag) in [(Board.microbitV2, "V2"), (.microbitV1, "V1")] {
            if let a = heart3, let b = heart18 {
                out.append(
                    .init(
                        name: "\(tag) runtime 3.0.68 → 8.0.18", kind: .newRuntime, board: board, running: a, update: b,
                        source: "corpus"))
            }
        }
        if let a = heart18 {
            out.append(
                .init(
                    name: "V2 small-heart again", kind: .upToDate, board: .microbitV2, running: a, update: a,
                    source: "corpus"))
        }
        return out
    }

    /// The scenarios on the project's sample firmware (no corpus needed).
    public static func samples(boards: [Board] = [.microbitV2, .microbitV1]) -> [BenchScenario] {
        func firmware(_ board: Board, _ r: SampleFirmware.RuntimeID, _ p: SampleFirmware.ProgramID) -> Firmware {
            let image = SampleFirmware.image(family: board.family, runtime: r, program: p)
            return Firmware(
                fileName: "sample-\(r)-\(p).hex", format: .intelHex,
                sections: [.init(family: board.family, image: image, warnings: [])])
        }
        var out: [BenchScenario] = []
        for board in boards {
            let tag = "sample \(board.family == .nrf51 ? "V1" : "V2")"
            out.append(
                .init(
                    name: "\(tag) heart → counter", kind: .edit, board: board,
                    running: firmware(board, .r1, .heart), update: firmware(board, .r1, .counter), source: "samples"))
            out.append(
                .init(
                    name: "\(tag) heart → large", kind: .edit, board: board,
                    running: firmware(board, .r1, .heart), update: firmware(board, .r1, .large), source: "samples"))
            if board.family == .nrf52833 {
                // A large program on a McuMgr board: a full update can beat partial flashing.
                out.append(
                    .init(
                        name: "\(tag) heart → huge", kind: .edit, board: board,
                        running: firmware(board, .r1, .heart), update: firmware(board, .r1, .huge), source: "samples"))
            }
        }
        if let board = boards.first {
            let tag = "sample \(board.family == .nrf51 ? "V1" : "V2")"
            out.append(
                .init(
                    name: "\(tag) runtime r1 → r2", kind: .newRuntime, board: board,
                    running: firmware(board, .r1, .heart), update: firmware(board, .r2, .heart), source: "samples"))
            out.append(
                .init(
                    name: "\(tag) heart again", kind: .upToDate, board: board,
                    running: firmware(board, .r1, .heart), update: firmware(board, .r1, .heart), source: "samples"))
        }
        return out
    }

    /// `firmware`'s image for `board` with another program on the same runtime: the program
    /// hash inverted and every program byte after the header changed, so that the board
    /// holds "its own runtime with a different program". Nil when the file has no program.
    public static func otherProgram(_ firmware: Firmware, board: Board) -> Firmware? {
        guard var image = try? firmware.image(for: board),
            let program = MakeCodeProgram.find(in: image, family: board.family)
        else { return nil }
        let hashAt = program.magicAddress + 24
        let bodyStart = program.magicAddress + 32
        guard bodyStart < program.region.upperBound else { return nil }
        let hash = program.programHash.map { ~$0 }
        let body = image.read(bodyStart..<program.region.upperBound).map { $0 == 0xFF ? $0 : $0 ^ 0x5A }
        do {
            try image.write(hash, at: hashAt, overwrite: true)
            try image.write(body, at: bodyStart, overwrite: true)
        } catch {
            return nil
        }
        return Firmware(
            fileName: "other-program-" + firmware.fileName, format: .intelHex,
            sections: [.init(family: board.family, image: image, warnings: [])])
    }
}
