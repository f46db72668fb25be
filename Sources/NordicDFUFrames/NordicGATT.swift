import PartialFlashingFrames
import Transport

/// The characteristics of Nordic DFU on micro:bit and Calliope mini boards.
public enum NordicGATT {
    /// Secure DFU service (16-bit 0xFE59): buttonless entry in the application, the
    /// bootloader's control point and packet characteristics in "DfuTarg".
    public static let secureService = BLEUUID("fe59")
    static func secure(_ short: String) -> GATTCharacteristic {
        GATTCharacteristic(service: secureService, characteristic: BLEUUID("8ec9\(short)-f315-4f60-9fb8-838830daea50"))
    }
    /// Secure DFU control point (Write Request + Notify).
    public static let secureControlPoint = secure("0001")
    /// Secure DFU packet (Write Without Response).
    public static let securePacket = secure("0002")
    /// Buttonless entry of an application built without bonds.
    public static let buttonlessUnbonded = secure("0003")
    /// Buttonless entry of an application built with bonds (MakeCode's usual build).
    public static let buttonlessBonded = secure("0004")

    /// Legacy DFU service of the nRF51 bootloader.
    public static let legacyService = BLEUUID("00001530-1212-efde-1523-785feabcd123")
    static func legacy(_ short: String) -> GATTCharacteristic {
        GATTCharacteristic(service: legacyService, characteristic: BLEUUID("0000\(short)-1212-efde-1523-785feabcd123"))
    }
    /// Legacy DFU control point (Write Request + Notify).
    public static let legacyControlPoint = legacy("1531")
    /// Legacy DFU packet (Write Without Response, at most 20 bytes).
    public static let legacyPacket = legacy("1532")
    /// Legacy DFU revision (Read: `04 00` on micro:bit V1).
    public static let legacyRevision = legacy("1534")

    /// micro:bit DFU control service of the nRF51 application (DAL `MicroBitDFUService`).
    public static let dfuControlService = BLEUUID("e95d93b0-251d-470a-a062-fa1922dfa9a8")
    /// micro:bit DFU control: writing 0x01 reboots an nRF51 board into its bootloader.
    public static let dfuControl = GATTCharacteristic(
        service: dfuControlService, characteristic: BLEUUID("e95d93b1-251d-470a-a062-fa1922dfa9a8"))

    /// The name both bootloaders advertise.
    public static let bootloaderName = "DfuTarg"
}

/// Which Nordic DFU a connection offers, and whether the board is already in its bootloader.
public enum NordicDFUTarget: Sendable, Equatable {
    /// micro:bit V2 / Calliope mini 3 application with the buttonless service.
    case secureApplication
    /// The secure bootloader ("DfuTarg").
    case secureBootloader
    /// micro:bit V1 / Calliope mini 1, 2 application with the DFU control service.
    case legacyApplication
    /// The legacy bootloader ("DfuTarg").
    case legacyBootloader

    /// What `info` shows, or nil when the board speaks no Nordic DFU.
    public init?(_ info: ConnectionInfo) {
        let s = info.services
        let named = info.name == NordicGATT.bootloaderName
        if s.contains(NordicGATT.legacyService) {
            self = .legacyBootloader
        } else if s.contains(NordicGATT.secureService) {
            self = named || !s.contains(PartialFlashingGATT.service) ? .secureBootloader : .secureApplication
        } else if s.contains(NordicGATT.dfuControlService) {
            self = .legacyApplication
        } else {
            return nil
        }
    }

    /// The board runs its bootloader ("DfuTarg").
    public var isBootloader: Bool { self == .secureBootloader || self == .legacyBootloader }
    /// The board speaks Secure DFU (else legacy DFU).
    public var isSecure: Bool { self == .secureApplication || self == .secureBootloader }
}
