import SimulatedBoard
import Transport
import NordicDFUFrames

/// What a board puts on air, as its firmware builds the advertising data: the flags, the
/// complete local name and the service UUIDs (no board configures scan-response data).
///
/// Per board and mode (research notes "boards: advertising", §4, from the sources cited):
/// - **pairing mode** (CODAL `MicroBitBLEManager.cpp` `pairingMode` L813-826, DAL
///   `pairingMode` L642-680): flags 0x06 (LE General Discoverable, BR/EDR not supported), the
///   name with the friendly name `BBC micro:bit [zotig]`, no UUIDs.
/// - **application mode**, when the program keeps Bluetooth on (CODAL L410-423, L487-491,
///   L1176-1218; DAL L366-378, L412-431): a build with security (Just Works, passkey) has
///   the whitelist on: it advertises only when it holds a bond, with flags 0x04 (not
///   discoverable) and the name without the friendly name (`BBC micro:bit`); a build
///   without security ("No pairing required", `MICROBIT_BLE_OPEN`) has no whitelist and
///   advertises like pairing mode. With Bluetooth off in application mode (CODAL's default,
///   `MICROBIT_BLE_ENABLED 0`) nothing at all.
/// - **bootloader** (V2 bootloader `nrf_dfu_ble.c` `advertising_init` L144-185; SDK 8
///   `dfu_transport_ble.c` `advertising_init` L671-691): `DfuTarg` with FE59 (Secure DFU) or
///   the legacy DFU service; flags 0x06 (the V2 bootloader clears "discoverable" only for a
///   peer with a non-zero IRK, which a BlueZ host does not hand out with `Privacy` off).
/// - **MCUboot profiles** (bitflash's own: no stock board runs MCUboot): a CODAL-style runtime
///   with an SMP service beside partial flashing, so it advertises as the runtime does (a
///   Zephyr application would add the McuMgr UUID, as `smp_svr` does; bitflash's scan
///   recognises that too).
///
/// The address is the same in every mode (no bootloader the boards run changes it; same
/// notes, §1.2). A scenario's `advertisedUUIDs` replaces all this with the old fixed
/// advertisement (the name as given, flags 0x06, those UUIDs, whenever the board is connectable).
struct FakeAdvertisement: Sendable, Equatable {
    var name: String
    /// The AD flags: 0x06 or 0x04.
    var flags: UInt8
    /// Service UUIDs, lower-case 128-bit strings.
    var uuids: [String]

    /// LE Limited or General Discoverable (what BlueZ's `device_is_discoverable()` looks at).
    var discoverable: Bool { flags & 0x03 != 0 }

    static let discoverableFlags: UInt8 = 0x06
    static let bondedOnlyFlags: UInt8 = 0x04

    /// The names the runtimes advertise before the friendly name.
    static let runtimeNames = ["BBC micro:bit", "Calliope mini"]

    /// `name` without a ` [friendly]` suffix after a runtime's name (other names as they are).
    static func baseName(of name: String) -> String {
        guard runtimeNames.contains(where: { name.hasPrefix($0 + " [") }), name.hasSuffix("]"),
            let open = name.lastIndex(of: "[")
        else { return name }
        return String(name[..<open].dropLast())
    }
}

extension FakeDevice {
    /// The board's name with its friendly name, as pairing mode advertises it.
    var pairingName: String { name }

    /// A build with security: the whitelist is on in application mode (MakeCode ties the two:
    /// "No pairing required" turns both off; CODAL `MICROBIT_BLE_OPEN` forces mode 1 and no whitelist).
    var whitelisted: Bool { behaviour.requiresPairing }
}

extension FakeState {
    /// What device `i` advertises now; nil when it does not advertise. A device at a board's
    /// next address (`atNextAddress`) is that board's bootloader built without bonds, which
    /// advertises there, and only there, while it runs (nRF5 SDK `nrf_dfu_ble.c` `gap_address_change`).
    func advertisement(of i: Int) -> FakeAdvertisement? {
        let own = devices[boardIndex(i)]
        guard !own.behaviour.absent, !own.host.isDown else { return nil }
        let board = own.host.board
        if heldThroughAnotherAdapter(i) { return nil }
        if devices[i].atNextAddress {
            return board.inNordicBootloader ? Self.bootloaderAdvertisement(board) : nil
        }
        if own.behaviour.bootloaderAtNextAddress, board.inNordicBootloader { return nil }
        let d = devices[i]
        if let fixed = d.behaviour.advertisedUUIDs {
            guard board.isConnectable,
                !(d.behaviour.pairingModeOnly && board.mode != .pairing && !board.inNordicBootloader)
            else {
                return nil
            }
            return FakeAdvertisement(
                name: board.inNordicBootloader ? board.advertisedName : d.name,
                flags: FakeAdvertisement.discoverableFlags, uuids: fixed.map { $0.lowercased() })
        }
        // A Nordic bootloader advertises all the time, even for a program that keeps Bluetooth off.
        if board.inNordicBootloader { return Self.bootloaderAdvertisement(board) }
        if board.mode == .pairing {
            return FakeAdvertisement(name: d.pairingName, flags: FakeAdvertisement.discoverableFlags, uuids: [])
        }
        guard board.profile.bluetoothInApplicationMode, !d.behaviour.pairingModeOnly else { return nil }
        guard d.whitelisted else {
            return FakeAdvertisement(name: d.pairingName, flags: FakeAdvertisement.discoverableFlags, uuids: [])
        }
        guard d.boardBonded else { return nil }
        return FakeAdvertisement(
            name: FakeAdvertisement.baseName(of: d.pairingName), flags: FakeAdvertisement.bondedOnlyFlags,
            uuids: [])
    }

    /// `DfuTarg` with the DFU service of the board's bootloader.
    static func bootloaderAdvertisement(_ board: SimulatedBoard) -> FakeAdvertisement {
        let service =
            board.profile.services.contains(.legacyDFU) ? NordicGATT.legacyService : NordicGATT.secureService
        return FakeAdvertisement(
            name: board.advertisedName, flags: FakeAdvertisement.discoverableFlags,
            uuids: [service.uuidString])
    }
}
