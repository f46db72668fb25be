import ArgumentParser

/// `bitflash bench …`: measurements.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure parts of bitflash.",
        subcommands: [BenchParseCommand.self])
}
