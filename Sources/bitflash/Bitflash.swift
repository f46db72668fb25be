import ArgumentParser

@main
struct Bitflash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bitflash",
        abstract: "Flash BBC micro:bit and Calliope mini boards over Bluetooth LE.",
        subcommands: [InspectCommand.self, BenchCommand.self])
}
