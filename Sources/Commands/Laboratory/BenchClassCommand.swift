import ArgumentParser
import Diagnostics
import Foundation
import Laboratory
import LinkModel

/// `bitflash-lab bench class`: class-set estimates against the modelled class time.
struct BenchClassCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "class",
        abstract: "Compare the class-set estimate with the modelled time of 8 to 64 boards on one adapter.",
        discussion: """
            Each class flashes the same sample onto every board at once, through one simulated \
            adapter whose radio the boards share (with a connection limit, --sim-adapter, in \
            waves): partial flashing of an edit (the boards run the \
            old program), and with --full the full updates (McuMgr on MCUboot boards, Nordic DFU \
            on stock boards); --path takes one path only. The class estimate (ClassEstimator) is \
            set beside the modelled class time and beside one board's own estimate, which leaves \
            the shared radio out. Times are modelled seconds; two runs give the same figures.
            """)

    @Option(
        name: .customLong("boards"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Class sizes (default 8, 16, 32, 64; repeatable).", valueName: "N"),
        transform: Limits.boards.transform)
    var counts: [Int] = []

    @OptionGroup var link: BenchLinkOptions

    @Option(
        name: .customLong("sim-adapter"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "The adapter's kind: csr8510, bcm20702, cyw43455, unknown (5 connections, as flash assumes), N "
                + "connections, or none (no connection limit, the default); repeatable: one table of all.",
            valueName: "PROFILE"))
    var adapterNames: [String] = []

    @Flag(help: "Also the full updates (McuMgr and Nordic DFU).")
    var full = false

    @Option(
        name: .customLong("path"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Only these paths: partial, mcumgr, nordic-dfu (repeatable; default partial, or all three with --full).",
            valueName: "PATH"))
    var paths: [ClassBench.Case] = []

    @Flag(help: "Print the rows as JSON lines instead of a table.")
    var json = false

    @Flag(help: "With --json, each row also gives every board's estimated and modelled finish (boardFinishes).")
    var perBoard = false

    func validate() throws {
        if perBoard && !json {
            throw ValidationError("--per-board needs --json: the table has no room for every board.")
        }
    }

    func run() throws {
        let adapters = try (adapterNames.isEmpty ? ["none"] : adapterNames).map {
            $0.lowercased() == "none" ? AdapterProfile.unlimited : try AdapterProfile(named: $0)
        }
        let links = try link.links()
        let sizes = counts.isEmpty ? ClassBench.boardCounts : counts
        let cases: [ClassBench.Case] = !paths.isEmpty ? paths : full ? ClassBench.Case.allCases : [.partial]
        let commit = (CommitStamp.commit ?? "unknown") + (CommitStamp.modified ? " (modified)" : "")
        let date = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        if !json {
            print(
                "class benchmark: commit \(commit), \(date); modelled seconds, one adapter; with a connection "
                    + "limit the boards go in waves, else all start together")
            print(
                "error = estimate / modelled − 1; before = one board's own estimate (the shared radio left out); "
                    + "retries = of all boards (0 with no faults)")
            print("")
            print(
                "| adapter | path | link | boards | retries | modelled class | estimate | error | worst board error "
                    + "| slowest board est. | before | before error |")
            print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        }
        // The largest error (by size, with its sign) of each path on each adapter.
        var worst: [String: Double] = [:]
        for adapter in adapters {
            let limit = ClassBench.limit(of: adapter)
            let label = limit.map { "\($0) at once" } ?? "no limit"
            for c in cases {
                for link in links {
                    for n in sizes {
                        let row = ClassBench.run(
                            c, boards: n, profile: link, adapter: adapter, perBoard: perBoard)
                        let key = "\(c.rawValue), \(label)"
                        if abs(row.classError) >= abs(worst[key] ?? 0) { worst[key] = row.classError }
                        if json {
                            print(try JSONText.line(row))
                            continue
                        }
                        let failed = row.failures > 0 ? " (\(row.failures) failed)" : ""
                        print(
                            "| \(label) | \(row.path) | \(row.profile) | \(row.boards)\(failed) | \(row.retries) | "
                                + "\(s(row.modelledClassSeconds)) | \(s(row.estimatedClassSeconds)) | "
                                + "\(pct(row.classError)) | \(pct(row.worstBoardError)) | "
                                + "\(s(row.estimatedSlowestSeconds)) | "
                                + "\(s(row.singleBoardSeconds)) | \(pct(row.singleBoardError)) |")
                    }
                }
            }
        }
        if !json {
            print("")
            for adapter in adapters {
                let label = ClassBench.limit(of: adapter).map { "\($0) at once" } ?? "no limit"
                for c in cases {
                    let key = "\(c.rawValue), \(label)"
                    print("largest error, \(key): \(pct(worst[key] ?? 0))")
                }
            }
        }
    }

    private func s(_ v: Double) -> String { String(format: "%.2f", v) }
    private func pct(_ v: Double) -> String { String(format: "%+.1f %%", v * 100) }
}

extension ClassBench.Case: ExpressibleByArgument {}
