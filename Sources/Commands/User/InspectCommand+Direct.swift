import ArgumentParser
import FirmwareImage
import SystemFiles

/// `bitflash inspect` as it is usually typed (a file, `--json`, `--board B`), run without the
/// argument parser and without the concurrency runtime: a whole `inspect` is mostly the process
/// starting, and the parser's first run over the command tree (reflection and protocol
/// conformance scans over a large binary) costs more than parsing the file. Anything else (help,
/// an unknown option, `--`, an option twice, a board name that is not one) goes to the parser,
/// which then says what is wrong exactly as it always does.
extension InspectCommand {
    /// The options given by the words after `inspect`, or nil when the parser must read them.
    static func direct(_ words: [String]) -> (file: String, board: Board?, json: Bool)? {
        var file: String?
        var board: Board?
        var boardGiven = false
        var json = false
        var rest = words[...]
        while let word = rest.popFirst() {
            if word == "--json" {
                guard !json else { return nil }
                json = true
            } else if word == "--board" || word.hasPrefix("--board=") {
                guard !boardGiven else { return nil }
                boardGiven = true
                let name = word == "--board" ? rest.popFirst() : String(word.dropFirst("--board=".count))
                guard let name, let named = Board(userName: name) else { return nil }
                board = named
            } else if word.isEmpty || word.hasPrefix("-") || file != nil {
                return nil
            } else {
                file = word
            }
        }
        guard let file else { return nil }
        return (file, board, json)
    }
}

extension BitflashMain {
    /// Runs `inspect` and exits when the command line is one ``InspectCommand/direct(_:)``
    /// reads; returns otherwise, for ``main(_:)``. Synchronous, on the calling thread.
    public static func runDirectly(_ front: Front) {
        let words = Array(CommandLine.arguments.dropFirst())
        guard words.first == "inspect", let options = InspectCommand.direct(Array(words.dropFirst())) else { return }
        Front.current = front
        // As in `main`: a file-size limit or a closed pipe makes a write fail, never kills the process.
        SystemPaths.ignoreFileSizeSignal()
        SystemPaths.ignoreBrokenPipeSignal()
        do {
            try InspectCommand.inspect(file: options.file, board: options.board, json: options.json)
        } catch {
            Bitflash.exit(withError: error)
        }
        Bitflash.exit()
    }
}
