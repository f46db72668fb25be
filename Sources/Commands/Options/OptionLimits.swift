import ArgumentParser
import LinkModel
import SimulatedFlashing
import UDPTransport

/// Every number option's allowed values, in one place (docs/options.md, "Options that
/// take numbers", lists the same). Options share a limit when they mean the same quantity.
enum Limits {
    /// `--max-connections`: boards connected at once per adapter.
    static let connectionsPerAdapter = NumberLimit(1...64)
    /// `sim bluez --adapters`: adapters the fake BlueZ plays.
    static let fakeAdapters = NumberLimit(1...8)
    /// `--boards`: a class set of simulated boards sharing one adapter; `scan --count`.
    static let boards = NumberLimit(1...64)
    /// `--timeout` (scan), `--scan-timeout`, `--connect-timeout`: real seconds of one Bluetooth step.
    static let bluetoothSeconds = NumberLimit(0.1...600.0, unit: " s")
    /// `--sim-reset-at`, `--sim-kill-at`: modelled seconds within a simulated run's deadline.
    static let modelledSeconds = NumberLimit(0.0...deadlineSeconds, unit: " s")
    static let killSeconds = NumberLimit(0.001...deadlineSeconds, unit: " s")
    /// `--sim-drop-at-write`: ATT write numbers, counted from 0.
    static let writeNumber = NumberLimit(0...1_000_000)
    /// `sim serve --for`, `sim bluez --for`: real seconds, up to a week (leave it out to serve until killed).
    static let serveSeconds = NumberLimit(0.001...604_800.0, unit: " s")
    /// `--sim-state-wait`: real seconds a run waits for another one that holds the state folder.
    static let stateWaitSeconds = NumberLimit(0.0...3600.0, unit: " s")
    /// `--time-scale`: real seconds per modelled second (0: at once).
    static let timeScale = NumberLimit(0.0...100.0)
    /// `--disconnect-after-writes`, `--acquired-sockets-close-after`.
    static let writesBeforeDrop = NumberLimit(1...1_000_000)
    /// `--seed`, `--hostile-seed`: any 64-bit seed.
    static let seed = NumberLimit(UInt64.min...UInt64.max)
    /// `sim campaign --runs` and `--from` (so that `from + runs` always fits).
    static let runs = NumberLimit(1...10_000_000)
    static let firstRun = NumberLimit(0...1_000_000_000_000)
    /// `sim campaign --progress`: real seconds between progress lines (0: never).
    static let progressSeconds = NumberLimit(0...86_400, unit: " s")
    /// `bench parse --iterations`, `bench host --iterations`.
    static let iterations = NumberLimit(1...1_000)
    /// `--ci`: a BLE connection interval in milliseconds (also a multiple of 1.25 ms).
    /// Up to just under 2 s: the board asks for a 4 s supervision timeout (CODAL PPCP), and the
    /// timeout must be larger than twice the interval (Bluetooth Core Vol 6 Part B §4.5.2).
    static let connectionIntervalMilliseconds = NumberLimit(7.5...1_998.75, unit: " ms")
    /// `watch --settle`, `watch --incomplete-wait`: real seconds a watched file stays unchanged.
    static let watchSeconds = NumberLimit(0.0...3_600.0, unit: " s")
    /// `BITFLASH_STATE_LOCK_WAIT`: how long a run waits for a state folder another run holds.
    static let lockWaitSeconds = NumberLimit(0.0...3_600.0, unit: " s")

    private static var deadlineSeconds: Double { Double(SimulatedFlash.defaultDeadline.components.seconds) }
}

/// The option values that are not plain numbers but hold them: link profiles (a connection
/// interval), UDP endpoints (a port) and Bluetooth addresses. Each parse refuses what the
/// command could not use, with the allowed values, as `NumberLimit` does.
enum OptionValues {
    /// `--link`, `bench --profile`: a named profile or a connection interval (`11.25ms`).
    static let link: @Sendable (String) throws -> String = { text in
        do { _ = try LinkProfile(named: text) } catch {
            throw OptionValueError(
                "expected linux-default, device-requested, fast, or a connection interval "
                    + "\(Limits.connectionIntervalMilliseconds.text) in steps of 1.25 ms, such as 11.25ms")
        }
        return text
    }

    /// `--sim-adapter`, `bench adapters --adapter`: an adapter profile.
    static let adapter: @Sendable (String) throws -> String = { text in
        do { _ = try AdapterProfile(named: text) } catch {
            throw OptionValueError(
                "expected csr8510, bcm20702, cyw43455 (or pi), unknown, NAME:N such as csr8510:3, "
                    + "or a number of connections 1…64")
        }
        return text
    }

    /// `bench --ci`: a connection interval in milliseconds.
    static let connectionInterval: @Sendable (String) throws -> Double = { text in
        let ms = try Limits.connectionIntervalMilliseconds.parse(text)
        do { _ = try LinkProfile.custom(connectionIntervalMicroseconds: Int64((ms * 1000).rounded())) } catch {
            throw OptionValueError(
                "expected a connection interval \(Limits.connectionIntervalMilliseconds.text) in steps of 1.25 ms")
        }
        return ms
    }

    /// `flash --udp`: the SMP server to update, port 1 to 65535.
    static let serverEndpoint: @Sendable (String) throws -> String = { try endpoint($0, ports: 1...65_535) }
    /// `sim serve --udp`: where to listen, port 0 (any free port) to 65535.
    static let listenEndpoint: @Sendable (String) throws -> String = { try endpoint($0, ports: 0...65_535) }

    private static func endpoint(_ text: String, ports: ClosedRange<Int>) throws -> String {
        guard let endpoint = try? UDPEndpoint(parsing: text), ports.contains(endpoint.port) else {
            throw OptionValueError(
                "it is not HOST:PORT with a port from \(ports.lowerBound) to \(ports.upperBound), "
                    + "such as 127.0.0.1:1337 or [::1]:1337")
        }
        return text
    }

    /// `sim bluez --address`: six hexadecimal bytes, upper-cased.
    static let bluetoothAddress: @Sendable (String) throws -> String = { text in
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            throw OptionValueError("expected a Bluetooth address of six hexadecimal bytes, such as F0:0D:00:00:00:01")
        }
        return text.uppercased()
    }
}
