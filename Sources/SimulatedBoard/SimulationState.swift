import LinkModel
import Transport

/// The simulation's internal bookkeeping.
extension Simulation {
    struct BoardSlot: Sendable {
        var board: SimulatedBoard
        var timing: DeviceTiming
        /// Incremented at every reset; device work of an earlier epoch is void.
        var epoch = 0
        /// While the board reboots it is down until this instant.
        var downUntil: VirtualInstant? = nil
        /// The live connection, if any.
        var connection: Int? = nil
    }

    /// One PDU waiting for, or being sent in, connection events.
    struct OutPDU: Sendable {
        enum Body: Sendable {
            case write(GATTCharacteristic, [UInt8], WriteKind)
            case subscribe(GATTCharacteristic)
            /// `copy`: a duplicate made by a fault (never duplicated again).
            case notification(GATTCharacteristic, [UInt8], copy: Bool)
            /// An ATT response (write response, CCCD write response): air time only.
            case response
        }
        var body: Body
        var handedAt: VirtualInstant
        /// Link-layer packet sizes still to send.
        var fragments: [Int]
        /// Already held back once by a fault.
        var delayed = false
    }

    struct Connection: Sendable {
        let id: Int
        let board: Int
        let job: Int
        /// The adapter whose controller holds the connection.
        let adapter: Int
        let schedule: ConnectionSchedule
        let mtu: Int
        let dataLength: Int
        /// False once the link is gone (the client may not know yet).
        var alive = true
        /// The client asked to disconnect; no more writes.
        var closing = false
        var central: [OutPDU] = []
        var peripheral: [OutPDU] = []
        var subscribed: Set<GATTCharacteristic> = []
        var pendingEvent: VirtualInstant? = nil

        /// Notifications the board's stack holds that have not left yet.
        var queuedNotifications: Int {
            peripheral.reduce(0) { n, pdu in
                if case .notification = pdu.body { return n + 1 }
                return n
            }
        }
    }

    struct Job: Sendable {
        var machine: any FlowMachine
        let board: Int
        var connection: Int? = nil
        var finished = false
        var finishedAt: VirtualInstant? = nil
        var error: (any Error)? = nil
        var timers: [TimerID: Int] = [:]
        var timerGeneration = 0
        var connectAttempts = 0
        var writesOnAir = 0
        var notificationsOnAir = 0
        var started = false
        /// The adapter the flow runs on (chosen when it starts).
        var adapter = 0
    }

    enum SimEvent: Sendable {
        case machine(job: Int, FlowEvent)
        case connectionEvent(conn: Int)
        case toBoard(conn: Int, OutPDU.Body)
        case toClient(conn: Int, GATTCharacteristic, [UInt8], copy: Bool)
        case linkLoss(conn: Int)
        case localDisconnect(conn: Int)
        case clientDisconnected(job: Int, conn: Int, DisconnectReason)
        case connectAttempt(job: Int, startedAt: VirtualInstant, initial: Bool)
        case connectEstablished(job: Int, board: Int, epoch: Int, initial: Bool)
        case creationStart(adapter: Int)
        case deviceWork(board: Int, epoch: Int, service: Int, tag: Int)
        case boardBoot(board: Int, epoch: Int)
        case deviceReset(board: Int)
        case pairingTimeout(board: Int, epoch: Int)
        case linkLossAt
        case timer(job: Int, TimerID, generation: Int)

        /// Board-internal events still run after the flows end, so a board settles.
        var isDeviceInternal: Bool {
            switch self {
            case .deviceWork, .boardBoot: return true
            default: return false
            }
        }
    }
}
