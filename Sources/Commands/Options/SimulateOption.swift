import ArgumentParser
import Foundation
import Laboratory

/// `--simulate [PROFILE]`: a flag, and the profile a word among the command's positional
/// arguments. The argument parser has no option with an optional value, so the flag says
/// "a simulated board" and a positional word that names a profile (`microbit-v1`) says which
/// kind, wherever it stands: `flash F --simulate`, `flash F --simulate microbit-v1`,
/// `flash --simulate microbit-v1 F`, `flash --simulate -- F`.
enum SimulateOption {
    /// The help of the flag.
    static func help(_ text: String) -> String {
        text + " Give the kind as a word after it: " + SimProfile.allValueStrings.joined(separator: ", ") + "."
    }

    /// The profile among `words` (when `simulate` is given) and the other words, in order: the
    /// word that names a profile and is not a file or folder, else the first that names one; none
    /// when that would leave fewer than `keeping` words.
    static func split(_ words: [String], simulate: Bool, keeping: Int) -> (profile: SimProfile?, rest: [String]) {
        let named = words.indices.filter { SimProfile(argument: words[$0]) != nil }
        guard simulate, words.count > keeping,
            let i = named.first(where: { !FileManager.default.fileExists(atPath: words[$0]) }) ?? named.first
        else { return (nil, words) }
        var rest = words
        rest.remove(at: i)
        return (SimProfile(argument: words[i]), rest)
    }
}
