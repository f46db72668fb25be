// RFC 8949 §8 diagnostic notation, for logs and test failure messages:
// `{"off": 0, "data": h'0102'}`.
import Diagnostics

extension CBOR: CustomStringConvertible {
    /// The item in diagnostic notation. Floats always show a decimal point or
    /// exponent so they are not mistaken for integers.
    public var description: String {
        switch self {
        case let .unsigned(n):
            return String(n)
        case let .negative(n):
            return n == .max ? "-18446744073709551616" : "-" + String(n + 1)
        case let .byteString(bytes):
            return "h'" + Hex.bytes(bytes, uppercase: false) + "'"
        case let .textString(text):
            return Self.quoted(text)
        case let .array(items):
            return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case let .map(pairs):
            return "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case let .tagged(tag, item):
            return "\(tag)(\(item))"
        case let .boolean(b):
            return b ? "true" : "false"
        case .null:
            return "null"
        case .undefined:
            return "undefined"
        case let .simple(v):
            return "simple(\(v))"
        case let .float(d):
            if d.isNaN { return "NaN" }
            if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
            let text = String(d)
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20:
                out += "\\u" + Hex.number(scalar.value, digits: 4, prefix: false, uppercase: false)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
