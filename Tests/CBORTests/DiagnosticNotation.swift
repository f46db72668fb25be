import TestSupport
import CBOR

/// A parser for the subset of CBOR diagnostic notation (RFC 8949 §8) used by
/// the Appendix A fixture, so expected values are written as the RFC writes them.
/// Indefinite-length markers (`_`) are accepted and give the definite item.
struct DiagnosticParser {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let chars: [Character]
    private var i = 0

    static func parse(_ text: String) throws -> CBOR {
        var p = DiagnosticParser(chars: Array(text))
        let value = try p.value()
        p.skipSpace()
        guard p.i == p.chars.count else { throw Failure(description: "trailing text in \(text)") }
        return value
    }

    private init(chars: [Character]) { self.chars = chars }

    private var peek: Character? { i < chars.count ? chars[i] : nil }

    private mutating func skipSpace() {
        while let c = peek, c == " " { i += 1 }
    }

    private mutating func expect(_ c: Character) throws {
        skipSpace()
        guard peek == c else { throw Failure(description: "expected \(c) at \(i)") }
        i += 1
    }

    private mutating func take(_ word: String) -> Bool {
        let w = Array(word)
        guard i + w.count <= chars.count, Array(chars[i..<i + w.count]) == w else { return false }
        i += w.count
        return true
    }

    private mutating func value() throws -> CBOR {
        skipSpace()
        for (word, item) in [
            ("true", CBOR.boolean(true)), ("false", .boolean(false)), ("null", .null),
            ("undefined", .undefined), ("Infinity", .float(.infinity)),
            ("-Infinity", .float(-.infinity)), ("NaN", .float(.nan))
        ] where take(word) {
            return item
        }
        if take("simple(") {
            let n = try number()
            try expect(")")
            guard case let .unsigned(v) = n, let byte = UInt8(exactly: v) else {
                throw Failure(description: "bad simple")
            }
            return .simple(byte)
        }
        switch peek {
        case "\""?: return .textString(try text())
        case "h"?: return .byteString(try byteString())
        case "["?: return .array(try list(open: "[", close: "]"))
        case "{"?: return .map(try pairs())
        case "("?:
            i += 1
            try expect("_")
            var parts = try list(open: nil, close: ")")
            guard let first = parts.first else { return .byteString([]) }
            if case .textString = first {
                return .textString(parts.compactMap(\.stringValue).joined())
            }
            parts = parts.filter { $0.bytesValue != nil }
            return .byteString(parts.flatMap { $0.bytesValue ?? [] })
        default:
            let n = try number()
            if peek == "(" {
                i += 1
                let inner = try value()
                try expect(")")
                guard case let .unsigned(tag) = n else { throw Failure(description: "bad tag") }
                return .tagged(tag, inner)
            }
            return n
        }
    }

    private mutating func number() throws -> CBOR {
        let start = i
        while let c = peek, c.isNumber || "+-.e".contains(c) { i += 1 }
        let s = String(chars[start..<i])
        if s.contains(".") || s.contains("e") {
            guard let d = Double(s) else { throw Failure(description: "bad float \(s)") }
            return .float(d)
        }
        if s.hasPrefix("-") {
            guard let magnitude = UInt128(s.dropFirst()), magnitude >= 1, let n = UInt64(exactly: magnitude - 1) else {
                throw Failure(description: "bad negative \(s)")
            }
            return .negative(n)
        }
        guard let n = UInt64(s) else { throw Failure(description: "bad integer \(s)") }
        return .unsigned(n)
    }

    private mutating func text() throws -> String {
        try expect("\"")
        var units: [UInt16] = []
        while let c = peek, c != "\"" {
            i += 1
            if c == "\\" {
                guard let e = peek else { throw Failure(description: "bad escape") }
                i += 1
                if e == "u" {
                    guard let unit = UInt16(String(chars[i..<i + 4]), radix: 16) else {
                        throw Failure(description: "bad \\u")
                    }
                    units.append(unit)
                    i += 4
                } else {
                    units.append(contentsOf: String(e).utf16)
                }
            } else {
                units.append(contentsOf: String(c).utf16)
            }
        }
        try expect("\"")
        return String(decoding: units, as: UTF16.self)
    }

    private mutating func byteString() throws -> [UInt8] {
        i += 1
        try expect("'")
        let start = i
        while let c = peek, c != "'" { i += 1 }
        let digits = String(chars[start..<i])
        try expect("'")
        guard let b = bytes(hex: digits) else { throw Failure(description: "bad hex \(digits)") }
        return b
    }

    /// Items separated by commas up to `close`; an opening `_` is skipped.
    private mutating func list(open: Character?, close: Character) throws -> [CBOR] {
        if let open { try expect(open) }
        skipSpace()
        if peek == "_" { i += 1 }
        var items: [CBOR] = []
        skipSpace()
        if peek == close { i += 1; return items }
        while true {
            items.append(try value())
            skipSpace()
            if peek == "," { i += 1; continue }
            try expect(close)
            return items
        }
    }

    private mutating func pairs() throws -> [CBOR.Pair] {
        try expect("{")
        skipSpace()
        if peek == "_" { i += 1 }
        var result: [CBOR.Pair] = []
        skipSpace()
        if peek == "}" { i += 1; return result }
        while true {
            let key = try value()
            try expect(":")
            result.append(CBOR.Pair(key, try value()))
            skipSpace()
            if peek == "," { i += 1; continue }
            try expect("}")
            return result
        }
    }
}
