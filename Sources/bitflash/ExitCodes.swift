import ArgumentParser
import BlueZTransport
import Foundation

/// bitflash's exit codes. They are documented in the README and stable for scripts.
enum BitflashExit: Int32, CaseIterable {
    /// Flashed and verified, or already up to date.
    case ok = 0
    /// Flashed and verified, but partial flashing failed and the full update was used.
    case okAfterFallback = 3
    /// Bad command line (EX_USAGE).
    case usage = 64
    /// The firmware file is malformed or has no image for this board (EX_DATAERR).
    case badFirmware = 65
    /// A file could not be read (EX_NOINPUT).
    case cannotRead = 66
    /// No such board: not found, out of range, or not connectable (EX_UNAVAILABLE).
    case boardNotFound = 69
    /// Internal error: a bug in bitflash (EX_SOFTWARE).
    case internalError = 70
    /// A file could not be written (EX_CANTCREAT).
    case cannotWrite = 73
    /// Flashing failed; the message says what to do (EX_IOERR).
    case flashFailed = 74
    /// Bluetooth is not usable: bluetoothd not running, no adapter, or the adapter is off (EX_TEMPFAIL).
    case bluetoothUnavailable = 75
    /// The board connected but BlueZ never resolved its services (EX_PROTOCOL).
    case servicesNotResolved = 76
    /// The board refused to pair (EX_NOPERM).
    case pairingRefused = 77

    var meaning: String {
        switch self {
        case .ok: return "flashed and verified, or already up to date"
        case .okAfterFallback: return "flashed and verified after falling back from partial flashing to a full update"
        case .usage: return "bad command line"
        case .badFirmware: return "the firmware file is malformed, or has no image for this board"
        case .cannotRead: return "a file could not be read"
        case .boardNotFound: return "board not found or not connectable"
        case .internalError: return "internal error (please report it)"
        case .cannotWrite: return "an output file could not be written"
        case .flashFailed: return "flashing failed"
        case .bluetoothUnavailable: return "Bluetooth not available (bluetoothd not running, no adapter, or adapter off)"
        case .servicesNotResolved: return "the board connected but its services never resolved"
        case .pairingRefused: return "the board refused to pair"
        }
    }
}

/// An error the CLI shows as it is, with the exit code it implies.
struct CLIError: Error, CustomStringConvertible {
    let exit: BitflashExit
    let message: String
    init(_ exit: BitflashExit, _ message: String) {
        self.exit = exit
        self.message = message
    }
    var description: String { message }
}

/// The one error funnel: runs a command body, prints any error to stderr as
/// `bitflash: error: ...`, and exits with the matching code.
func runCommand(_ body: () async throws -> BitflashExit) async throws {
    let code: BitflashExit
    do {
        code = try await body()
    } catch let error as CLIError {
        StdErr.write("bitflash: error: \(error.message)\n")
        throw ExitCode(error.exit.rawValue)
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        StdErr.write("bitflash: error: \(describe(error))\n")
        throw ExitCode(classify(error).rawValue)
    }
    if code != .ok { throw ExitCode(code.rawValue) }
}

/// A readable description of any error: its own description where it has one.
func describe(_ error: any Error) -> String {
    String(describing: error)
}

/// The exit code of an error that is not a `CLIError`, decided by the layer it comes from.
func classify(_ error: any Error) -> BitflashExit {
    let type = String(reflecting: Swift.type(of: error))
    if let bluez = error as? BlueZError { return bluez.exit }
    if type.hasPrefix("FirmwareImage.") { return .badFirmware }
    if error is CocoaError || error is POSIXError { return .cannotRead }
    if type.hasPrefix("Transport.") || type.hasPrefix("BlueZTransport.") { return .boardNotFound }
    if type.hasPrefix("PartialFlashing.") || type.hasPrefix("McuMgr.") || type.hasPrefix("SMP.") { return .flashFailed }
    return .flashFailed
}
