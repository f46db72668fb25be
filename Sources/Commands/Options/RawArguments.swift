import Diagnostics
import Foundation
import SystemFiles

/// The command line as the kernel gave it, before Swift made strings of it: Swift replaces bytes
/// that are not UTF-8 with U+FFFD, so a file whose name is not UTF-8 would be looked for under
/// another name and reported missing. Such an argument is refused with what it holds instead.
enum RawArguments {
    /// - Throws: `CLIError(.usage)` naming the first argument that is not UTF-8, its bytes escaped.
    static func requireUTF8(_ arguments: [[UInt8]] = current()) throws {
        for (index, bytes) in arguments.enumerated().dropFirst() where String(validating: bytes, as: UTF8.self) == nil {
            let shown = bytes.map {
                (0x20..<0x7F).contains($0)
                    ? String(UnicodeScalar($0)) : "\\x" + Hex.number($0, digits: 2, prefix: false)
            }
            .joined()
            throw CLIError(
                .usage,
                "argument \(index) (\(shown)) is not UTF-8 text: bitflash cannot name a file whose name is not; "
                    + "rename it (for example with `mv`), then give the new name")
        }
    }

    /// The bytes of each argument of this process (`SystemFiles`, where the pointer code lives).
    static func current() -> [[UInt8]] { ProcessArguments.bytes() }
}
