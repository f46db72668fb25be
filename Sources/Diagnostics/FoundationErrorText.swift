import Foundation

/// Foundation's file and JSON errors in words a user can act on. On Linux their own description
/// is "The operation could not be completed. (NSCocoaErrorDomain error 4.)" or
/// "Error Domain=NSCocoaErrorDomain Code=260 …", which names neither the cause nor a fix.
public enum FoundationErrorText {
    /// `no such file or directory`, `permission denied`, `the JSON is not valid: …`; the error's
    /// own description for errors that are not Foundation's.
    public static func describe(_ error: any Error) -> String {
        if let decoding = error as? DecodingError { return describe(decoding) }
        if let encoding = error as? EncodingError, case let .invalidValue(_, context) = encoding {
            return "a value cannot be written as JSON (\(context.debugDescription))"
        }
        let ns = error as NSError
        // The cause, when the error carries the system call's: as an NSError, or on Linux as the
        // POSIXError swift-corelibs-foundation puts there.
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return posix(underlying.code.rawValue)
        }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return posix(Int32(underlying.code))
        }
        if ns.domain == NSPOSIXErrorDomain { return posix(Int32(ns.code)) }
        guard ns.domain == NSCocoaErrorDomain else { return String(describing: error) }
        switch ns.code {
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "no such file or directory"
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "permission denied"
        case NSFileWriteOutOfSpaceError: return "no space left on the device"
        case NSFileWriteVolumeReadOnlyError: return "the file system is read-only"
        case NSFileWriteFileExistsError: return "a file of that name is in the way"
        case NSFileReadInvalidFileNameError, NSFileWriteInvalidFileNameError: return "not a valid file name"
        case NSFileReadTooLargeError: return "the file is too large to read"
        case NSFileReadCorruptFileError, NSPropertyListReadCorruptError: return "the file is not valid JSON"
        case NSFileReadUnknownStringEncodingError, NSFileReadInapplicableStringEncodingError:
            return "the file is not UTF-8 text"
        case NSFileLockingError: return "the file is locked"
        default:
            return ns.code >= NSFileWriteUnknownError && ns.code < NSFileWriteUnknownError + 256
                ? "the file could not be written (Foundation file error \(ns.code))"
                : "the file could not be read (Foundation file error \(ns.code))"
        }
    }

    /// `the JSON is not valid: …`, or the key or value that does not fit, with its path.
    public static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "the top level" : String(keys.drop { $0 == "." })
        }
        switch error {
        case let .dataCorrupted(context):
            let underlying = (context.underlyingError as NSError?).map { " (\(describe($0)))" } ?? ""
            return context.codingPath.isEmpty
                ? "the file is not valid JSON\(underlying == " (the file is not valid JSON)" ? "" : underlying)"
                : "\(path(context)) is not a value it can be: \(context.debugDescription)"
        case let .keyNotFound(key, context):
            let within = context.codingPath.isEmpty ? "" : " in \(path(context))"
            return "the key \"\(key.stringValue)\" is missing\(within)"
        case let .typeMismatch(type, context), let .valueNotFound(type, context):
            return "\(path(context)) is not \(type == String.self ? "a string" : "a value of type \(type)")"
        @unknown default:
            return "the JSON does not fit: \(error)"
        }
    }

    private static func posix(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }
}
