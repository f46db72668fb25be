import Diagnostics
import Foundation

/// A scenario file for the fake BlueZ: the boards it plays and how they misbehave (the
/// format is shown at the top of `FakeBlueZ.swift`). Unknown keys are refused, so a typo
/// does not silently give a well-behaved board.
public struct FakeBlueZScenario: Decodable, Sendable {
    /// Real seconds per modelled second, unless the command line says otherwise.
    public var timeScale: Double?
    /// The adapter's address.
    public var adapterAddress: String?
    public var boards: [Board]

    /// One board: which simulated board, what it advertises, how it misbehaves.
    public struct Board: Decodable, Sendable {
        /// The board's file name in the state folder (without `.json`).
        public var state: String?
        /// A simulated board profile, e.g. `microbit-v2-mcuboot`.
        public var profile: String?
        /// The advertised name.
        public var name: String?
        public var address: String?
        /// A firmware file to put on the board first.
        public var from: String?
        public var behaviour: FakeBoardBehaviour

        enum Keys: String, CodingKey, CaseIterable { case state, profile, name, address, from }

        public init(from decoder: any Decoder) throws {
            try Self.refuseUnknownKeys(
                decoder,
                known: Keys.allCases.map(\.rawValue)
                    + FakeBoardBehaviour.CodingKeys.allCases.map(\.rawValue))
            let c = try decoder.container(keyedBy: Keys.self)
            state = try c.decodeIfPresent(String.self, forKey: .state)
            profile = try c.decodeIfPresent(String.self, forKey: .profile)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            address = try c.decodeIfPresent(String.self, forKey: .address)
            from = try c.decodeIfPresent(String.self, forKey: .from)
            behaviour = try FakeBoardBehaviour(from: decoder)
        }

        static func refuseUnknownKeys(_ decoder: any Decoder, known: [String]) throws {
            let all = try decoder.container(keyedBy: AnyKey.self)
            for key in all.allKeys where !known.contains(key.stringValue) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: all,
                    debugDescription:
                        "unknown key '\(key.stringValue)'; known keys: \(known.sorted().joined(separator: ", "))")
            }
        }
    }

    enum Keys: String, CodingKey, CaseIterable { case timeScale, adapterAddress, boards }

    public init(from decoder: any Decoder) throws {
        try Board.refuseUnknownKeys(decoder, known: Keys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: Keys.self)
        timeScale = try c.decodeIfPresent(Double.self, forKey: .timeScale)
        adapterAddress = try c.decodeIfPresent(String.self, forKey: .adapterAddress)
        boards = try c.decode([Board].self, forKey: .boards)
    }

    /// Reads a scenario file.
    /// - Throws: `FakeBlueZError.badScenario` saying what is wrong and where.
    public static func load(from url: URL) throws -> FakeBlueZScenario {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FakeBlueZError.badScenario("cannot read \(url.path): \(FoundationErrorText.describe(error))")
        }
        do {
            let scenario = try JSONDecoder().decode(FakeBlueZScenario.self, from: data)
            guard !scenario.boards.isEmpty else { throw FakeBlueZError.badScenario("\(url.path): \"boards\" is empty") }
            return scenario
        } catch let error as FakeBlueZError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw FakeBlueZError.badScenario("\(url.path)\(Self.where(context)): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw FakeBlueZError.badScenario(
                "\(url.path)\(Self.where(context)): the key '\(key.stringValue)' is missing")
        } catch let DecodingError.typeMismatch(type, context) {
            throw FakeBlueZError.badScenario("\(url.path)\(Self.where(context)): expected \(type)")
        } catch let DecodingError.valueNotFound(type, context) {
            throw FakeBlueZError.badScenario("\(url.path)\(Self.where(context)): expected \(type), found null")
        } catch {
            throw FakeBlueZError.badScenario("\(url.path): \(error)")
        }
    }

    private static func `where`(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "" : " at \(path)"
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
