import ArgumentParser

/// `bitflash bench …`: measurements. `bitflash bench` alone runs the flash benchmark.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure parts of bitflash.",
        subcommands: [BenchFlashCommand.self, BenchHostCommand.self, BenchParseCommand.self, BenchAdaptersCommand.self],
        defaultSubcommand: BenchFlashCommand.self)
}
