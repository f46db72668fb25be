import Foundation
import Transport
import PartialFlashingFrames
import SMP

/// How a user names a board on the command line: its address or its name.
///
/// An address matches exactly (either case, `:` `-` or `_` between the bytes). A name matches
/// exactly (ignoring case), or as the micro:bit's friendly name in brackets
/// (`zotig` for `BBC micro:bit [zotig]`), or as a unique part of a name.
public struct DeviceQuery: Sendable, Equatable, CustomStringConvertible {
    public let text: String

    public init(_ text: String) { self.text = text.trimmingCharacters(in: .whitespaces) }

    /// The address this query names, or nil when it is a name.
    public var address: String? {
        let normal = text.uppercased().replacingOccurrences(of: "-", with: ":").replacingOccurrences(of: "_", with: ":")
        return BlueZDevice.isAddress(normal) ? normal : nil
    }

    public var description: String { text }

    /// How well `device` matches: nil for no match, lower is better.
    public func rank(_ device: BlueZDevice) -> Int? {
        rank(name: device.name, address: device.address)
    }

    /// How well a device of this name and address matches: nil for no match, lower is better.
    public func rank(name: String?, address deviceAddress: String) -> Int? {
        if let address { return deviceAddress.uppercased() == address ? 0 : nil }
        guard let name = name?.lowercased(), !text.isEmpty else { return nil }
        let q = text.lowercased()
        if name == q { return 1 }
        if let open = name.lastIndex(of: "["), let close = name.lastIndex(of: "]"), open < close,
            name[name.index(after: open)..<close] == Substring(q)
        {
            return 2
        }
        return name.contains(q) ? 3 : nil
    }

    /// The one device that matches best.
    /// - Throws: `BlueZError.ambiguousDevice` when several match equally well; nil when none does.
    public func best(in devices: [BlueZDevice]) throws -> BlueZDevice? {
        let ranked = devices.compactMap { d in rank(d).map { (d, $0) } }
        guard let top = ranked.map(\.1).min() else { return nil }
        let winners = ranked.filter { $0.1 == top }.map(\.0)
        // The same board seen on two adapters is still one board.
        let addresses = Set(winners.map(\.address))
        guard addresses.count == 1 else {
            throw BlueZError.ambiguousDevice(query: text, matches: winners.map(\.label).sorted())
        }
        return winners[0]
    }
}

extension BlueZDevice {
    /// `Name (AA:BB:…)`, or the address alone; a name longer than 48 characters is cut.
    public var label: String { shortName.map { "\($0) (\(address))" } ?? address }

    /// The name for messages: cut to 48 characters.
    public var shortName: String? { name.map { $0.count > 48 ? $0.prefix(47) + "…" : $0 } }

    /// A guess of the kind of board from what it advertises (before connecting).
    public var boardKindGuess: String {
        let n = (name ?? "").lowercased()
        let kind: String
        if n.contains("calliope") {
            kind = "Calliope mini"
        } else if n.contains("micro:bit") || n.contains("microbit") {
            kind = "micro:bit"
        } else {
            kind = "unknown"
        }
        let offersSMP = services.contains(SMPGATT.service)
        if kind == "unknown" && !offersSMP && !services.contains(PartialFlashingGATT.service) { return kind }
        return offersSMP ? "\(kind == "unknown" ? "board" : kind) with MCUboot (full updates)" : kind
    }

    /// True when the device is a board by the rules of `BoardSighting.recognize`: a runtime's
    /// name, "DfuTarg", the McuMgr service, or the flashing services BlueZ resolved before.
    public var looksFlashable: Bool { BoardSighting.recognize(self) != nil }
}
