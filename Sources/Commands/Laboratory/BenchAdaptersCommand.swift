import ArgumentParser
import Diagnostics
import Foundation
import Laboratory
import LinkModel

/// `bitflash-lab bench adapters`: a class set over 1, 2 and 3 adapters on each link profile.
struct BenchAdaptersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "Flash a class set over one or more simulated adapters, against the air-time and wave bounds.",
        discussion: """
            Each board runs the sample V2 heart program; the counter program is flashed to all of them \
            (a partial flash with its read-back). The boards are spread over the adapters as `flash` \
            spreads them: at most the adapter's connections at once, the next board starting when one \
            finishes, on the adapter that frees up first. Times are modelled seconds.
            """)

    @Option(
        parsing: .unconditional, help: Limits.boards.help("Boards in the class (default 30)", valueName: "N"),
        transform: Limits.boards.transform)
    var boards: Int = 30

    @Option(
        name: .customLong("adapters"), parsing: .upToNextOption,
        help: Limits.fakeAdapters.help("Numbers of adapters to compare (default 1 2 3)", valueName: "N"),
        transform: Limits.fakeAdapters.transform)
    var adapterCounts: [Int] = [1, 2, 3]

    @Option(
        name: .customLong("sim-adapter"),
        help: ArgumentHelp(
            "The adapters' profile: csr8510, bcm20702, cyw43455 (pi), unknown (default), NAME:N or N.",
            valueName: "PROFILE"),
        transform: OptionValues.adapter)
    var adapter: String = "unknown"

    @OptionGroup var link: BenchLinkOptions

    @Flag(help: "Print the rows as JSON instead of a table.")
    var json = false

    func run() throws {
        let links = try link.links()
        let profile = try AdapterProfile(named: adapter)
        let rows = AdapterBench.run(boards: boards, adapterCounts: adapterCounts, adapter: profile, profiles: links)
        if json {
            print(try JSONText.document(rows))
            return
        }
        print(
            "adapter benchmark: \(boards) boards, \(profile.description); modelled time; "
                + "\(Bitflash.versionLine), run \(Self.today())")
        print(Self.table(rows))
        for note in AdapterBench.notes { print("- \(note)") }
    }

    static func today() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date())
    }

    /// A Markdown table, one row per profile and number of adapters.
    static func table(_ rows: [AdapterBench.Row]) -> String {
        func s(_ v: Double) -> String { String(format: "%.2f", v) }
        var out =
            "| link | CI ms | adapters | boards verified | class s | one board s | radio bound s | wave bound s "
            + "| class / bound | busiest radio air s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for r in rows {
            out +=
                "| \(r.profile) | \(r.connectionIntervalMilliseconds.formatted()) | \(r.adapters) | \(r.verified)/\(r.boards) "
                + "| \(s(r.modelledSeconds)) | \(s(r.oneBoardSeconds)) | \(s(r.radioBoundSeconds)) "
                + "| \(s(r.waveBoundSeconds)) | \(s(r.ratio)) | \(s(r.busiestRadioSeconds)) |"
                + (r.error.map { " error: \($0)" } ?? "") + "\n"
        }
        return out
    }
}
