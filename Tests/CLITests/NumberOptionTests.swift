import Foundation
import Testing
import TestSupport

/// Every option that takes a number, given hostile values: each is refused by the argument
/// parser (exit 64) with a message naming the option and its allowed range, never a trap
/// (exit 132) and never a run. The table is docs/options.md's.
@Suite(.enabled(if: BitflashBinary.url != nil, "bitflash binary not built (.build/debug/bitflash): CLI tests skipped"))
struct NumberOptionTests {
    /// One number option: the command it belongs to, and its allowed range as the help says it.
    struct NumberOption: Sendable, CustomTestStringConvertible {
        var command: [String]
        var option: String
        var lowest: Double
        var highest: Double
        var whole: Bool
        var testDescription: String { (command + [option]).joined(separator: " ") }

        func allows(_ value: String) -> Bool {
            if whole {
                guard let n = Int(value) else { return UInt64(value).map { Double($0) <= highest } ?? false }
                return Double(n) >= lowest && Double(n) <= highest
            }
            guard let x = Double(value), x.isFinite else { return false }
            return x >= lowest && x <= highest
        }
    }

    static let file = "prog.hex"
    static let options: [NumberOption] = [
        .init(command: ["flash", file, "--simulate"], option: "--boards", lowest: 1, highest: 64, whole: true),
        .init(
            command: ["flash", file, "--simulate"], option: "--sim-drop-at-write", lowest: 0, highest: 1_000_000,
            whole: true),
        .init(command: ["flash", file, "--simulate"], option: "--sim-reset-at", lowest: 0, highest: 900, whole: false),
        .init(
            command: ["flash", file, "--simulate"], option: "--sim-kill-at", lowest: 0.001, highest: 900, whole: false),
        .init(
            command: ["flash", file, "--simulate"], option: "--sim-state-wait", lowest: 0, highest: 3600, whole: false),
        .init(command: ["sim", "reset"], option: "--sim-state-wait", lowest: 0, highest: 3600, whole: false),
        .init(
            command: ["sim", "serve", "--udp", "127.0.0.1:0"], option: "--sim-state-wait", lowest: 0, highest: 3600,
            whole: false),
        .init(command: ["sim", "bluez"], option: "--sim-state-wait", lowest: 0, highest: 3600, whole: false),
        .init(
            command: ["flash", file, "--device", "sim"], option: "--scan-timeout", lowest: 0.1, highest: 600,
            whole: false),
        .init(
            command: ["flash", file, "--device", "sim"], option: "--connect-timeout", lowest: 0.1, highest: 600,
            whole: false),
        .init(command: ["info", "--device", "sim"], option: "--scan-timeout", lowest: 0.1, highest: 600, whole: false),
        .init(command: ["info", "--simulate"], option: "--sim-kill-at", lowest: 0.001, highest: 900, whole: false),
        .init(command: ["scan"], option: "--timeout", lowest: 0.1, highest: 600, whole: false),
        .init(command: ["scan"], option: "--count", lowest: 1, highest: 64, whole: true),
        .init(command: ["sim", "reset"], option: "--boards", lowest: 1, highest: 64, whole: true),
        .init(
            command: ["sim", "serve", "--udp", "127.0.0.1:0"], option: "--for", lowest: 0.001, highest: 604_800,
            whole: false),
        .init(
            command: ["sim", "serve", "--udp", "127.0.0.1:0"], option: "--time-scale", lowest: 0, highest: 100,
            whole: false),
        .init(command: ["sim", "bluez"], option: "--for", lowest: 0.001, highest: 604_800, whole: false),
        .init(command: ["sim", "bluez"], option: "--time-scale", lowest: 0, highest: 100, whole: false),
        .init(
            command: ["sim", "bluez"], option: "--disconnect-after-writes", lowest: 1, highest: 1_000_000, whole: true),
        .init(
            command: ["sim", "bluez"], option: "--acquired-sockets-close-after", lowest: 1, highest: 1_000_000,
            whole: true),
        .init(
            command: ["sim", "bluez", "--hostile", "wrong-types"], option: "--hostile-seed", lowest: 0,
            highest: Double(UInt64.max),
            whole: true),
        .init(command: ["sim", "campaign"], option: "--runs", lowest: 1, highest: 10_000_000, whole: true),
        .init(
            command: ["sim", "campaign"], option: "--seed", lowest: 0, highest: Double(UInt64.max), whole: true),
        .init(command: ["sim", "campaign"], option: "--from", lowest: 0, highest: 1_000_000_000_000, whole: true),
        .init(command: ["sim", "campaign"], option: "--progress", lowest: 0, highest: 86_400, whole: true),
        .init(command: ["bench", "flash"], option: "--ci", lowest: 7.5, highest: 1998.75, whole: false),
        .init(command: ["bench", "parse"], option: "--iterations", lowest: 1, highest: 1000, whole: true),
        .init(command: ["bench", "parse"], option: "--processes", lowest: 1, highest: 1000, whole: true),
        .init(command: ["bench", "host"], option: "--iterations", lowest: 1, highest: 1000, whole: true),
        .init(command: ["flash", file, "--simulate"], option: "--max-connections", lowest: 1, highest: 64, whole: true),
        .init(command: ["sim", "bluez"], option: "--adapters", lowest: 1, highest: 8, whole: true),
        .init(command: ["sim", "bluez"], option: "--adapter-max-connections", lowest: 1, highest: 64, whole: true),
        .init(command: ["bench", "adapters"], option: "--boards", lowest: 1, highest: 64, whole: true),
        .init(command: ["bench", "adapters"], option: "--adapters", lowest: 1, highest: 8, whole: true)
    ]

    static let hostile = [
        "inf", "-inf", "nan", "-1", "0", "1e20", "9223372036854775807", "18446744073709551616", "", "1.5", "ten", "-0.5"
    ]

    /// Runs one value both ways (`--opt VALUE`, `--opt=VALUE`) unless the option allows it.
    static func expectRefused(_ o: NumberOption, _ value: String) throws {
        guard !o.allows(value) else { return }
        for arguments in [o.command + [o.option, value], o.command + ["\(o.option)=\(value)"]] {
            let r = try BitflashBinary.lab(arguments)
            #expect(r.status == 64, "\(arguments): exit \(r.status), \(r.stderr)")
            #expect(r.stderr.contains("'\(o.option)"), "\(arguments): \(r.stderr)")
            #expect(
                r.stderr.contains("from \(Self.shown(o.lowest))") && r.stderr.contains(Self.shown(o.highest)),
                "\(arguments): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(arguments) ran: \(r.stdout)")
        }
    }

    static func shown(_ x: Double) -> String {
        x == x.rounded() && x < 1e15
            ? String(Int64(x)) : x == Double(UInt64.max) ? "18446744073709551615" : String(x)
    }

    @Test("hostile numbers are refused with the option's name and range, never a trap", arguments: options)
    func hostileNumbersAreRefusedByName(_ option: NumberOption) throws {
        for value in Self.hostile { try Self.expectRefused(option, value) }
        try Self.expectRefused(
            option, Self.shown(option.highest == Double(UInt64.max) ? 0 : option.highest + 1))
    }

    @Test("the help of each number option states its range")
    func helpStatesTheRange() throws {
        for o in Self.options {
            let r = try BitflashBinary.lab(
                o.command.prefix { !$0.hasPrefix("-") && $0 != Self.file }.map { $0 } + ["--help"])
            let help = r.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
            #expect(help.contains("from \(Self.shown(o.lowest))"), "\(o.testDescription): \(r.stdout)")
        }
    }

    @Test("a negative number after a list option is that option's value, refused with its range")
    func negativeNumberInAList() throws {
        for arguments in [
            ["flash", Self.file, "--simulate", "--sim-reset-at", "1", "-2"],
            ["flash", Self.file, "--simulate", "--sim-drop-at-write", "-5"]
        ] {
            let r = try BitflashBinary.lab(arguments)
            #expect(r.status == 64)
            #expect(r.stderr.contains("is invalid for '\(arguments[3])") && r.stderr.contains("from 0"), "\(r.stderr)")
        }
    }

    @Test(
        "links, endpoints and addresses: a value the command cannot use is refused with what it takes",
        arguments: [
            (
                ["flash", file, "--simulate", "--link"],
                ["-5ms", "0ms", "inf", "nan", "1e20", "8ms", "", "9223372036854775807ms", "4000ms", "2000ms"],
                "7.5 ms to 1998.75 ms"
            ),
            (["demo", "--link"], ["-5ms", "infms"], "7.5 ms to 1998.75 ms"),
            (["sim", "campaign", "--link"], ["-1", "1e20ms"], "7.5 ms to 1998.75 ms"),
            (["bench", "flash", "--profile"], ["-7.5ms", "nan"], "7.5 ms to 1998.75 ms"),
            (
                ["flash", file, "--udp"],
                ["localhost", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1", ":1337", "", "h:9223372036854775807"],
                "port from 1 to 65535"
            ),
            (["sim", "serve", "--udp"], ["127.0.0.1:65536", "-1", "[::1]", "127.0.0.1:1e3"], "port from 0 to 65535"),
            (
                ["sim", "bluez", "--address"],
                ["ZZ:ZZ", "", "F0:0D:00:00:00", "F0:0D:00:00:00:01:02", "-1", "G0:0D:00:00:00:01"],
                "six hexadecimal bytes"
            )
        ] as [([String], [String], String)])
    func textValuesHoldingNumbers(_ command: [String], _ values: [String], _ expected: String) throws {
        for value in values {
            // `--udp=` (nothing attached) is a missing value, and says so.
            let attached: [[String]] = value.isEmpty ? [] : [Array(command.dropLast()) + ["\(command.last!)=\(value)"]]
            for arguments in [command + [value]] + attached {
                let r = try BitflashBinary.lab(arguments)
                #expect(r.status == 64, "\(arguments): exit \(r.status), \(r.stderr)")
                #expect(
                    r.stderr.contains("'\(command.last!)") && r.stderr.contains(expected), "\(arguments): \(r.stderr)")
            }
        }
    }

    @Test("an option given no value says so, and a scenario's time scale is held to --time-scale's range")
    func missingValueAndScenarioScale() throws {
        let r = try BitflashBinary.lab(["flash", Self.file, "--simulate", "--boards"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Missing value for '--boards"), "\(r.stderr)")
        let dir = try BitflashBinary.temporaryDirectory()
        let scenario = dir.appendingPathComponent("scenario.json")
        try #"{"timeScale": 1e300, "boards": [{}]}"#.write(to: scenario, atomically: true, encoding: .utf8)
        let s = try BitflashBinary.lab([
            "sim", "bluez", "--scenario", scenario.path, "--sim-state", dir.path, "--bus", "unix:path=/nonexistent"
        ])
        #expect(s.status == 65, "\(s.stderr)")
        #expect(s.stderr.contains("timeScale") && s.stderr.contains("from 0 to 100"), "\(s.stderr)")
    }
}
