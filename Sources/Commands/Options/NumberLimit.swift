import ArgumentParser

/// A number an option takes: whole numbers, seeds and real quantities (seconds, scales).
protocol OptionNumber: Comparable, LosslessStringConvertible, Sendable {
    /// The number as help and errors write it (`600`, not `600.0`).
    var shown: String { get }
    /// What a value must be, in words: "a whole number", "a number".
    static var kindWord: String { get }
}

extension Int: OptionNumber {
    var shown: String { String(self) }
    static var kindWord: String { "a whole number" }
}

extension UInt64: OptionNumber {
    var shown: String { String(self) }
    static var kindWord: String { "a whole number" }
}

extension Double: OptionNumber {
    var shown: String {
        rounded() == self && magnitude < 1e15 ? String(Int64(self)) : String(self)
    }
    static var kindWord: String { "a number" }
}

/// The allowed values of one number option, and the one parse every number from the
/// command line goes through. Text that is no number, not finite (`inf`, `nan`), or outside
/// `range` is refused by the argument parser, exit 64, with the option's name and this
/// range. The value that reaches a command therefore always fits the conversions after it
/// (`Duration`, `Int64` microseconds, `firstRun + runs`): none of them can trap.
struct NumberLimit<Value: OptionNumber>: Sendable {
    let range: ClosedRange<Value>
    /// The unit written after each bound (`" s"`, `" ms"`), or none.
    let unit: String

    init(_ range: ClosedRange<Value>, unit: String = "") {
        self.range = range
        self.unit = unit
    }

    /// `from 1 to 64`, `from 0.1 s to 600 s`.
    var text: String { "from \(range.lowerBound.shown)\(unit) to \(range.upperBound.shown)\(unit)" }

    func parse(_ text: String) throws -> Value {
        guard let value = Value(text), range.contains(value) else {
            throw OptionValueError("expected \(Value.kindWord) \(self.text)")
        }
        return value
    }

    /// The parse, as an option's `transform`.
    var transform: @Sendable (String) throws -> Value {
        let limit = self
        return { try limit.parse($0) }
    }

    /// An option's help with the allowed range appended.
    func help(_ text: String, valueName: String? = nil) -> ArgumentHelp {
        ArgumentHelp("\(text) (\(self.text)).", valueName: valueName)
    }
}

/// Why an option's value was refused; the argument parser prefixes the option and the value
/// (`The value 'inf' is invalid for '--for <SECONDS>': expected a number from …`).
struct OptionValueError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
