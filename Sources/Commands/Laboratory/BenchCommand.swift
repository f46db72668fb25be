import ArgumentParser

/// `bitflash-lab bench …`: measurements. `bitflash-lab bench` alone runs the flash benchmark.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure parts of bitflash.",
        subcommands: [
            BenchFlashCommand.self, BenchClassCommand.self, BenchAdaptersCommand.self, BenchHostCommand.self,
            BenchParseCommand.self
        ],
        defaultSubcommand: BenchFlashCommand.self)
}
