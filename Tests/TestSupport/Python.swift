import Foundation

/// Running the Python reference tools (intelhex, cbor2, smp, imgtool, uf2conv) from tests.
/// Tests that need one skip with a message when `Python.has` says it is missing.
public enum Python {
    /// True when `python3 -c 'import <module>'` succeeds.
    public static func has(_ module: String) -> Bool {
        (try? run(["-c", "import \(module)"]).status) == 0
    }

    /// Runs python3 with `arguments`, feeding `input`; returns its exit status and standard output.
    public static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// Bytes from a hex string, or nil when it is not hex.
public func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var i = 0
    while i < digits.count {
        guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
        out.append(byte)
        i += 2
    }
    return out
}

/// Lower-case hex of bytes.
public func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
