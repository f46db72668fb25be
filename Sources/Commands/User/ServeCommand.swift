import ArgumentParser
import Foundation

/// `bitflash serve`: the class page, a local web page to flash a class set. The server is its own
/// executable, `bitflash-serve`, found beside `bitflash` (as git finds its subcommands), so that
/// `bitflash` itself carries no web server; this command runs it with the same arguments.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Flash a class set from a local web page (runs bitflash-serve; see bitflash serve --help).",
        discussion: """
            Prints a URL with a secret token made for this start; open it in a browser on this computer. \
            The page takes a firmware file, shows the boards in range, estimates the class and shows each \
            board's progress live. Listens on 127.0.0.1 only unless --address names another address. \
            With --simulate [PROFILE] --boards N, a simulated class of N boards.
            """)

    @Argument(
        parsing: .captureForPassthrough,
        help: "The options of bitflash-serve (--simulate, --boards, --port, --address, --speed).")
    var arguments: [String] = []

    /// Where `bitflash-serve` is: beside this executable.
    static func server() -> String {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return ((me as NSString).deletingLastPathComponent as NSString).appendingPathComponent("bitflash-serve")
    }

    func run() async throws {
        try await runCommand {
            let path = Self.server()
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw CLIError(
                    .internalError,
                    "bitflash serve runs bitflash-serve, which is not beside bitflash (\(path)): install it there, "
                        + "or build it with `swift build --product bitflash-serve`")
            }
            let child = Process()
            child.executableURL = URL(fileURLWithPath: path)
            child.arguments = arguments
            do { try child.run() } catch {
                throw CLIError(.internalError, "bitflash-serve (\(path)) could not be started: \(describe(error))")
            }
            child.waitUntilExit()
            throw ExitCode(child.terminationStatus)
        }
    }
}
