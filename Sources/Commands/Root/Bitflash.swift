import ArgumentParser
import Laboratory
import SystemFiles

/// The two executables that share these commands: `bitflash`, what a user flashes with, and
/// `bitflash-lab`, the laboratory (benchmarks, the fault campaign, traces and their replay, the
/// simulated boards served over UDP and BlueZ, fault injection). Set once, before parsing.
public enum Front: Sendable {
    case user, lab

    /// The executable running.
    nonisolated(unsafe) static var current = Front.user

    /// Its name, as usage lines and messages name it.
    var name: String { self == .lab ? "bitflash-lab" : "bitflash" }

    /// `help` in the laboratory; in `bitflash`, an option it refuses and never shows.
    static func labOnly(_ help: ArgumentHelp) -> ArgumentHelp { current == .lab ? help : .private }
}

/// The entry point of both executables.
public enum BitflashMain {
    /// Parses the command line as `front` and runs the command (never returns).
    public static func main(_ front: Front) async {
        Front.current = front
        // A file-size limit (`ulimit -f`) makes a write fail with its error, never kills the process.
        SystemPaths.ignoreFileSizeSignal()
        // A closed pipe on standard output makes its writes fail (see StdOut), never kills a flash.
        SystemPaths.ignoreBrokenPipeSignal()
        await Bitflash.main()
    }
}

/// The root command of `bitflash` and of `bitflash-lab`.
struct Bitflash: AsyncParsableCommand {
    /// bitflash's version: the one place it is written down (`scripts/package` reads it back
    /// from `bitflash --version`).
    static let version = "0.9.0"

    /// `bitflash 0.9.0 (commit abc1234, 2026-11-25)`: the version and the commit it was built
    /// from, stamped at build time (`CommitStamp`); "commit unknown" when built outside a git
    /// checkout, "with local changes" when the sources differed from the commit.
    static var versionLine: String {
        let name = Front.current.name
        guard let commit = CommitStamp.commit else { return "\(name) \(version) (commit unknown)" }
        let changes = CommitStamp.modified ? " with local changes" : ""
        let date = CommitStamp.date.map { ", \($0)" } ?? ""
        return "\(name) \(version) (commit \(commit)\(changes)\(date))"
    }

    /// What a user flashes with.
    static let userCommands: [any ParsableCommand.Type] = [
        FlashCommand.self, WatchCommand.self, ScanCommand.self, InfoCommand.self, ForgetCommand.self,
        PlanCommand.self, DemoCommand.self, InspectCommand.self, ConvertCommand.self, SimCommand.self, ServeCommand.self
    ]

    /// The laboratory: every command of `bitflash`, with fault injection and traces, and the
    /// simulated boards' servers, the campaign, the benchmarks and the trace tools.
    static let labCommands: [any ParsableCommand.Type] = userCommands + [BenchCommand.self, TraceCommand.self]

    static var configuration: CommandConfiguration {
        Front.current == .lab
            ? CommandConfiguration(
                commandName: "bitflash-lab",
                abstract:
                    "bitflash's laboratory: benchmarks, the fault campaign, traces and replay, simulated boards served over UDP and BlueZ, fault injection.",
                discussion: "Flashing boards is `bitflash`'s; see `bitflash --help`.",
                version: versionLine, subcommands: labCommands)
            : CommandConfiguration(
                commandName: "bitflash",
                abstract: "Flash BBC micro:bit and Calliope mini boards over Bluetooth LE.",
                discussion:
                    "Benchmarks, the fault campaign, traces and fault injection are in the laboratory, `bitflash-lab`.",
                version: versionLine, subcommands: userCommands)
    }

    /// Parses and runs the command line (`--simulate [PROFILE]` is parsed by the commands
    /// themselves: `SimulateOption`).
    static func main() async {
        await main(attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
    }

    /// The options that take a list of numbers (`--sim-reset-at 1 2 3`).
    static let numberListOptions: Set<String> = ["--sim-drop-at-write", "--sim-reset-at"]

    /// A negative number in a number list (`--sim-reset-at 1 -2`) looks like an option to the
    /// argument parser; attached (`--sim-reset-at=-2`), it reaches the option's range check and
    /// is refused by name. The single-value number options read their next word whatever it
    /// looks like (`parsing: .unconditional`).
    static func attachingNegativeNumbers(_ args: [String]) -> [String] {
        var out: [String] = []
        var list: String?
        for arg in args {
            if arg == "--" { list = nil }
            if let option = list, arg.count > 1, arg.hasPrefix("-"), Double(arg) != nil {
                // Right after the option, the option itself takes it; later, a repetition does.
                if out.last == option { out.removeLast() }
                out.append("\(option)=\(arg)")
                continue
            }
            if arg.hasPrefix("-") { list = numberListOptions.contains(arg) ? arg : nil }
            out.append(arg)
        }
        return out
    }
}
