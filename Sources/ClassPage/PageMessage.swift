import Foundation

/// The class as the page's header shows it: counts, the class's time left, the estimate.
public struct ClassView: Codable, Sendable, Equatable {
    /// Boards chosen for the flash that runs or ran last.
    public var boards = 0
    /// Ended well, result not in yet (`BoardView.Status.finished`).
    public var finished = 0
    public var verified = 0
    public var unverified = 0
    public var failed = 0
    /// Chosen, session not started.
    public var waiting = 0
    /// Session running.
    public var working = 0
    /// Whether a flash runs now.
    public var running = false
    /// The class's time left, in seconds (nil: not known, or nothing runs).
    public var eta: Double?
    /// The estimate of the chosen boards before the start, in words (nil: none).
    public var estimate: String?
    /// The estimate's class time in seconds.
    public var estimateSeconds: Double?

    public init() {}

    /// The counts of `boards` (those not idle), with `running` and the times given.
    public static func of(
        _ boards: [BoardView], running: Bool, eta: Double?, estimate: String?, estimateSeconds: Double?
    ) -> ClassView {
        var view = ClassView()
        for board in boards where board.status != .idle {
            view.boards += 1
            switch board.status {
            case .finished: view.finished += 1
            case .verified: view.verified += 1
            case .unverified: view.unverified += 1
            case .failed: view.failed += 1
            case .waiting: view.waiting += 1
            case .working: view.working += 1
            case .idle: break
            }
        }
        view.running = running
        view.eta = running ? eta : nil
        view.estimate = estimate
        view.estimateSeconds = estimateSeconds
        return view
    }
}

/// What the page is told over its event stream (Server-Sent Events), one JSON object a message,
/// told apart by `type`.
public enum PageMessage: Sendable, Equatable {
    /// Everything at once: on connecting, and when the file or the boards in range change.
    case state(PageState)
    /// One board changed (an event or its result), with the class's counts after it.
    case board(BoardView, ClassView)

    /// The message as one line of JSON (keys sorted, so the same state is the same text).
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data?
        switch self {
        case let .state(state): data = try? encoder.encode(Tagged(type: "state", state: state))
        case let .board(board, view): data = try? encoder.encode(Tagged(type: "board", board: board, class: view))
        }
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The message as a Server-Sent Event: `data: {…}` and a blank line (JSON holds no newline).
    public func event() -> String { "data: \(json())\n\n" }

    private struct Tagged: Encodable {
        var type: String
        var state: PageState?
        var board: BoardView?
        var `class`: ClassView?
    }
}

/// The whole page: Bluetooth, the file, the boards, the class.
public struct PageState: Codable, Sendable, Equatable {
    /// Whether the boards can be reached: always for simulated boards; over BlueZ, whether
    /// Bluetooth answered, and why not.
    public var bluetooth: Bluetooth
    /// The file given, when one is (nil: none yet).
    public var file: FileSummary?
    public var boards: [BoardView]
    public var `class`: ClassView
    /// `simulated` or `bluez`.
    public var backend: String
    /// The largest file the page takes, in bytes (`FileCheck.largestUpload`).
    public var uploadLimit = FileCheck.largestUpload

    public struct Bluetooth: Codable, Sendable, Equatable {
        public var available: Bool
        /// Why not, and what to do.
        public var problem: String?

        public init(available: Bool, problem: String? = nil) {
            self.available = available
            self.problem = problem
        }
    }

    public init(bluetooth: Bluetooth, file: FileSummary?, boards: [BoardView], class view: ClassView, backend: String) {
        self.bluetooth = bluetooth
        self.file = file
        self.boards = boards
        self.class = view
        self.backend = backend
    }
}
