@testable import Commands
import Diagnostics
import Foundation
import Testing
import TestSupport

/// The help of both executables, pinned word for word as swift-argument-parser's own tests pin
/// theirs (`AssertHelp`): a change to an option shows up as a change to a file under
/// Tests/CLITests/Help/. `BITFLASH_UPDATE_HELP=1` writes the files anew from the built binaries.
@Suite(.enabled(if: BitflashBinary.labURL != nil, "bitflash or bitflash-lab not built: help tests skipped"))
struct HelpTests {
    static let folder = Corpus.repoRoot.appendingPathComponent("Tests/CLITests/Help")

    /// The help of `arguments`, at a fixed width.
    static func help(lab: Bool, _ arguments: [String]) throws -> String {
        let environment = ["COLUMNS": "100"]
        let r = try (lab ? BitflashBinary.lab : BitflashBinary.run)(arguments + ["--help"], environment)
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        return r.stdout
    }

    static let pinned: [(file: String, lab: Bool, arguments: [String])] = [
        ("bitflash.txt", false, []),
        ("bitflash-flash.txt", false, ["flash"]),
        ("bitflash-sim.txt", false, ["sim"]),
        ("bitflash-lab.txt", true, []),
        ("bitflash-lab-flash.txt", true, ["flash"]),
        ("bitflash-lab-sim.txt", true, ["sim"])
    ]

    @Test("the help of bitflash and bitflash-lab is as pinned", arguments: 0..<6)
    func helpIsAsPinned(index: Int) throws {
        let entry = Self.pinned[index]
        let text = try Self.help(lab: entry.lab, entry.arguments)
        let file = Self.folder.appendingPathComponent(entry.file)
        if ProcessInfo.processInfo.environment["BITFLASH_UPDATE_HELP"] == "1" {
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        let pinned = try String(contentsOf: file, encoding: .utf8)
        #expect(text == pinned, "\(entry.file) differs; BITFLASH_UPDATE_HELP=1 writes it anew")
    }

    @Test("bitflash lists what a user flashes with and no laboratory command; bitflash-lab lists the laboratory")
    func theLaboratoryIsItsOwnExecutable() throws {
        let user = try Self.help(lab: false, [])
        for command in ["flash", "watch", "scan", "info", "forget", "plan", "demo", "inspect", "convert", "sim"] {
            #expect(user.contains("\n  \(command) "), "bitflash lacks \(command)")
        }
        for command in ["bench", "trace"] { #expect(!user.contains("\n  \(command) "), "bitflash lists \(command)") }
        let sim = try Self.help(lab: false, ["sim"])
        for command in ["serve", "bluez", "campaign", "replay", "samples"] {
            #expect(!sim.contains("\n  \(command) "), "bitflash sim lists \(command)")
        }
        let flash = try Self.help(lab: false, ["flash"])
        for option in ["--sim-drop-at-write", "--sim-reset-at", "--sim-kill-at", "--trace"] {
            #expect(!flash.contains(option), "bitflash flash lists \(option)")
        }
        #expect(flash.split(separator: "\n").count <= 90, "bitflash flash --help is \(flash.count) lines")
        let lab = try Self.help(lab: true, [])
        for command in ["bench", "trace", "sim", "flash"] { #expect(lab.contains("\n  \(command) ")) }
        let labSim = try Self.help(lab: true, ["sim"])
        for command in ["serve", "bluez", "campaign", "replay"] { #expect(labSim.contains("\n  \(command) ")) }
        let labFlash = try Self.help(lab: true, ["flash"])
        for option in ["--sim-drop-at-write", "--sim-kill-at", "--trace"] { #expect(labFlash.contains(option)) }
    }

    @Test("fault injection given to bitflash is refused with the laboratory's command (64)")
    func faultInjectionBelongsToTheLaboratory() throws {
        for option in [["--sim-kill-at", "3"], ["--sim-drop-at-write", "60"], ["--trace", "t.jsonl"]] {
            let r = try BitflashBinary.run(["flash", "x.hex", "--simulate"] + option)
            #expect(r.status == 64, "\(option): \(r.stderr)")
            #expect(
                r.stderr.contains("\(option[0]) belongs to the laboratory: run the same command as `bitflash-lab flash")
            )
        }
    }

    @Test("every exit code a command's help names is in the documented table")
    func helpNamesOnlyDocumentedExitCodes() throws {
        let documented = Set(try ExitCodeTableTests.readmeRows().map(\.code))
        #expect(documented == Set(Commands.ExitStatus.allCases.map(\.rawValue)))
        let commands: [(Bool, [String])] =
            [
                "flash", "watch", "scan", "info", "forget", "plan", "demo", "inspect", "convert"
            ].map { (false, [$0]) } + [(true, ["sim", "replay"]), (true, ["sim", "serve"]), (true, ["sim", "bluez"])]
        for (lab, command) in commands {
            let text = try Self.help(lab: lab, command).replacingOccurrences(of: "\n", with: " ")
            guard let range = text.range(of: "Exit codes:") else { continue }
            // The list runs to the end of its sentence: "0 flashed…, 2 written…, 64 bad command line."
            let rest = text[range.upperBound...]
            let tail = rest.firstRange(of: /\.(\s|$)/).map { rest[..<$0.lowerBound] } ?? rest
            let codes = tail.matches(of: /(?:^|[ ,:])(\d{1,3}) [a-zA-Z-]/).compactMap { Int32($0.1) }
            #expect(!codes.isEmpty, "\(command): \(tail)")
            for code in codes { #expect(documented.contains(code), "\(command) --help names exit \(code): \(tail)") }
        }
    }

    @Test("words after -- are arguments: --simulate there is not rewritten, and no internal option shows")
    func argumentsAfterTheSeparatorAreLeftAlone() throws {
        let dir = try BitflashBinary.temporaryDirectory()
        let file = dir.appendingPathComponent("-dash.hex")
        try FileManager.default.copyItem(at: BitflashBinary.sample("sample-r1-counter.hex"), to: file)
        let state = ["--sim-state", dir.appendingPathComponent("s").path]
        // `--simulate` before `--`, the file after it: flashed.
        let flashed = try BitflashBinary.run(["flash", "--simulate"] + state + ["--", file.path])
        #expect(flashed.status == 0, "\(flashed.stderr)")
        // `--simulate` after `--` is a second file name, refused as such, with no internal option named.
        let refused = try BitflashBinary.run(["flash"] + state + ["--", file.path, "--simulate"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(!refused.stderr.contains("simulate-profile-unnamed"), "\(refused.stderr)")
    }
}
