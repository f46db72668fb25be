import Foundation

/// JSON text: the one encoder configuration every layer uses for results, records, saved boards
/// and traces (sorted keys, slashes as they are), so the same value always reads the same.
public enum JSONText {
    private static let pretty = encoder(pretty: true)
    private static let compact = encoder(pretty: false)

    private static func encoder(pretty: Bool) -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// `value` as an indented document.
    public static func document<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try data(value), as: UTF8.self)
    }

    /// `value` as an indented document, as bytes for a file.
    public static func data<T: Encodable>(_ value: T) throws -> Data { try pretty.encode(value) }

    /// `value` on one line, as bytes.
    public static func lineData<T: Encodable>(_ value: T) throws -> Data { try compact.encode(value) }

    /// `value` on one line.
    public static func line<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try lineData(value), as: UTF8.self)
    }
}
