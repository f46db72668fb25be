#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line as the kernel gave it, byte for byte: Swift's `CommandLine.arguments`
/// replaces bytes that are not UTF-8 with U+FFFD.
public enum ProcessArguments {
    /// The bytes of each argument of this process, the program's name first.
    public static func bytes() -> [[UInt8]] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)).map { $0 }
        }
    }
}
