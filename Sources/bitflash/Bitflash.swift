import ArgumentParser
import Laboratory

@main
struct Bitflash: AsyncParsableCommand {
    /// bitflash's version: the one place it is written down (`scripts/package` reads it back
    /// from `bitflash --version`).
    static let version = "0.9.0"

    /// `bitflash 0.9.0 (commit abc1234, 2026-11-25)`: the version and the commit it was built
    /// from, stamped at build time (`CommitStamp`); "commit unknown" when built outside a git
    /// checkout, "with local changes" when the sources differed from the commit.
    static var versionLine: String {
        guard let commit = CommitStamp.commit else { return "bitflash \(version) (commit unknown)" }
        let changes = CommitStamp.modified ? " with local changes" : ""
        let date = CommitStamp.date.map { ", \($0)" } ?? ""
        return "bitflash \(version) (commit \(commit)\(changes)\(date))"
    }

    static let configuration = CommandConfiguration(
        commandName: "bitflash",
        abstract: "Flash BBC micro:bit and Calliope mini boards over Bluetooth LE.",
        version: versionLine,
        subcommands: [FlashCommand.self, ScanCommand.self, InfoCommand.self, ForgetCommand.self, PlanCommand.self, DemoCommand.self, InspectCommand.self,
                      ConvertCommand.self, SimCommand.self, TraceCommand.self, BenchCommand.self])

    /// Lets `--simulate` stand without a profile (`bitflash flash prog.hex --simulate`):
    /// a missing or non-profile value gets the default profile.
    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        var i = 0
        while i < args.count {
            if args[i] == "--simulate", i + 1 == args.count || SimProfile(argument: args[i + 1]) == nil {
                args.insert(SimProfile.default.description, at: i + 1)
            }
            i += 1
        }
        await main(args)
    }
}
