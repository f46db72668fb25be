import ArgumentParser
import Diagnostics
import Flashing
import Foundation

/// An error the CLI shows as it is, with the exit status it implies.
struct CLIError: Error, CustomStringConvertible {
    let exitStatus: ExitStatus
    let message: String
    init(_ exitStatus: ExitStatus, _ message: String) {
        self.exitStatus = exitStatus
        self.message = message
    }
    var description: String { message }
}

/// The one error funnel: runs a command body, prints any error to stderr as
/// `bitflash: error: ...`, and exits with the matching code.
func runCommand(_ body: () async throws -> ExitStatus) async throws {
    let code: ExitStatus
    do {
        try RawArguments.requireUTF8()
        code = try await body()
    } catch let error as CLIError {
        StdErr.write("bitflash: error: \(error.message)\n")
        throw ExitCode(error.exitStatus.rawValue)
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

/// The status of a run that flashed boards with these results, after one line on stderr for
/// each board that failed (also with `--json`, whose standard output holds the result objects):
/// the first failure's status, else 3 after a fallback, else 0.
func finishFlash(_ results: [FlashResult]) -> ExitStatus {
    let prefix = { (r: FlashResult) in results.count == 1 ? "" : "\(r.board): " }
    for r in results {
        if let message = r.error {
            StdErr.write("bitflash: error: \(prefix(r))\(message)\n")
        } else if r.verification == .unverified {
            StdErr.write(
                "bitflash: warning: \(prefix(r))written but not verified: \(r.verificationNote ?? "the board was not read back")\n"
            )
        }
    }
    return ExitStatus(results: results)
}

/// A readable description of any error: the command line's wording where it has one
/// (`CommandLineHinted`), else the error's own description.
func describe(_ error: any Error) -> String {
    if let hinted = error as? any CommandLineHinted { return hinted.commandLineDescription }
    // Foundation's own words are "NSCocoaErrorDomain error 260": say what it means instead.
    if error is CocoaError || error is POSIXError || error is DecodingError || error is EncodingError {
        return FoundationErrorText.describe(error)
    }
    return String(describing: error)
}

/// The exit status of any error: the status its type reports (every layer's error type
/// reports one), 66 for a file Foundation could not read, 74 (flashing failed) otherwise.
func classify(_ error: any Error) -> ExitStatus {
    if error is CocoaError || error is POSIXError { return .cannotRead }
    return ExitStatus.of(error)
}
