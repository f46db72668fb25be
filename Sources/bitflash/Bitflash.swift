import ArgumentParser
import Laboratory

@main
struct Bitflash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bitflash",
        abstract: "Flash BBC micro:bit and Calliope mini boards over Bluetooth LE.",
        subcommands: [FlashCommand.self, ScanCommand.self, InfoCommand.self, ForgetCommand.self, PlanCommand.self, DemoCommand.self, InspectCommand.self,
                      ConvertCommand.self, SimCommand.self, TraceCommand.self, BenchCommand.self])

    /// Lets `--simulate` stand without a profile (`bitflash flash prog.hex --simulate`):
    /// a missing or non-profile value gets the default profile, marked as not named so that
    /// the kind of board already in the state folder wins.
    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        let named = zip(args, args.dropFirst()).contains { $0 == "--simulate" && SimProfile(argument: $1) != nil }
        var i = 0
        while i < args.count {
            if args[i] == "--simulate", i + 1 == args.count || SimProfile(argument: args[i + 1]) == nil {
                args.insert(contentsOf: [SimProfile.default.description] + (named ? [] : ["--" + SimulationOptions.unnamedProfileFlag]),
                            at: i + 1)
            }
            i += 1
        }
        await main(args)
    }
}
