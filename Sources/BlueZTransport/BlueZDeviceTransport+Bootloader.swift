import Diagnostics
import Foundation
import DBus
import Transport

/// Finding a board again after it reset between its application and its Nordic bootloader.
///
/// The micro:bit V1/V2 and Calliope mini bootloaders keep the application's address (the V2
/// bootloader is built with `NRF_DFU_BLE_REQUIRES_BONDS 1`, which leaves out the address
/// change; the nRF51 bootloader binary has no `sd_ble_gap_address_set` call). A stock Nordic
/// bootloader built without bonds advertises at the address + 1 on its last octet, without
/// carry (nRF5 SDK `nrf_dfu_ble.c` `gap_address_change`; SDK 8 `dfu_transport_ble.c`
/// `dfu_transport_update_start`), as Nordic's Android library also expects
/// (`BootloaderScannerFactory`). So the transport tries the expected address first, for
/// `Settings.bootloaderAddressWindow`, then scans for whichever of the two addresses
/// advertises, and from then on talks to the device it found.
///
/// BlueZ keeps the application's GATT objects across the reset (`[GATT] Cache = always`), but
/// rediscovers the primary services at every connection of these boards (they have no
/// Database Hash) and replaces a service whose handle range changed, so the table is read
/// afresh once `ServicesResolved` is true (`establish`), never reused from before the reset.
extension BlueZDeviceTransport {
    /// Connects to `target`: the same device, or the board's bootloader or application after a
    /// reset, at the address it is expected at or at the other one.
    public func connect(to target: ConnectTarget, timeout: Duration) async throws -> ConnectionInfo {
        do { return try await establish(to: target, timeout: timeout) } catch { throw error.transportError }
    }

    /// `connect(to:timeout:)` with the richer `BlueZError`.
    public func establish(to target: ConnectTarget, timeout: Duration) async throws(BlueZError) -> ConnectionInfo {
        let current = currentAddress
        // The application when the last link was to it (or to the bootloader at its address) is the same device.
        guard target != .sameDevice, !(target == .application && current == address) else {
            return try await establish(timeout: timeout)
        }
        let next = BlueZDevice.nextAddress(after: address)
        let order: [String]
        switch target {
        case .application: order = [address, next]
        default: order = current == address ? [address, next] : [current, address]
        }
        // The expected address, for a short while, when BlueZ knows it.
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let first = await knownDevice(order[0])
        if let first {
            switchDevice(to: first)
            do {
                return try await establish(timeout: min(settings.bootloaderAddressWindow, timeout))
            } catch .connectFailed, .timeout, .notConnected, .disconnected {
                // Not back there (yet): look for it at its other address.
            }
        }
        // The other address, once it advertises: BlueZ invalidates every RSSI when discovery
        // stops (`src/adapter.c` `discovery_cleanup`), so an RSSI means a fresh advertisement.
        let other = order[1]
        let seen: [BlueZDevice]
        do {
            seen = try await BlueZScanner(bus: bus, adapter: adapterPath).scan(
                timeout: max(.seconds(1), min(settings.rediscoverTimeout, clock.now.duration(to: deadline))),
                services: nil,
                stopWhen: { $0.address == other && $0.rssi != nil })
        } catch let error as BlueZError {
            throw error
        } catch {
            throw BlueZError.failed(operation: "looking for \(label) after its reset", message: "\(error)")
        }
        if let found = seen.first(where: { $0.address == other && $0.rssi != nil }) {
            switchDevice(to: found)
            return try await establish(timeout: max(clock.now.duration(to: deadline), settings.bootloaderAddressWindow))
        }
        // Not there either: the board may only be slow to come back where it was expected.
        guard let first else {
            throw BlueZError.connectFailed(
                device: label,
                message: "after its reset the board advertised neither at \(order[0]) "
                    + "nor at \(other)")
        }
        switchDevice(to: first)
        return try await establish(timeout: max(clock.now.duration(to: deadline), settings.bootloaderAddressWindow))
    }

    /// The buttonless characteristic "with bonds" of Nordic Secure DFU (FE59 `8EC90004`).
    static let bondedButtonless = BLEUUID("8ec90004-f315-4f60-9fb8-838830daea50")

    /// The buttonless entry "with bonds" works only for a bonded peer: the application hands
    /// the peer's bond to the bootloader and answers `20 01 07` without one (CODAL's
    /// `ble_dfu_bonded.c` `retrieve_peer_data`). A board whose characteristic is open (a
    /// "no pairing" MakeCode build still has it) would refuse the entry, so pair first.
    func bondBeforeBondedEntry(_ characteristic: GATTCharacteristic) async throws {
        guard characteristic.characteristic == Self.bondedButtonless, settings.pairWhenRequired,
            !(state.withLock { $0.device?.paired ?? false })
        else { return }
        do { try await pair() } catch let error as BlueZError { throw error.transportError }
    }

    /// The address of the device this transport talks to now (the application's, or its bootloader's).
    public var currentAddress: String {
        state.withLock { $0.device?.address ?? BlueZDevice.address(ofPath: $0.devicePath) ?? address }
    }

    /// The device at `address` when BlueZ has an object for it.
    func knownDevice(_ address: String) async -> BlueZDevice? {
        if address == currentAddress, let d = state.withLock({ $0.device }) { return d }
        let path = BlueZDevice.path(adapter: adapterPath, address: address)
        return try? await bus.objects().devices.first { $0.path == path }
    }

    /// From now on, talk to `device`.
    func switchDevice(to device: BlueZDevice) {
        state.withLock {
            guard $0.devicePath != device.path else { return }
            $0.devicePath = device.path
            $0.device = device
            $0.linkUp = false
            $0.gattDirty = true
            $0.pendingReason = nil
        }
    }
}

extension BlueZDevice {
    /// The address a stock Nordic bootloader built without bonds advertises at: the last octet
    /// plus one, wrapping 0xFF to 0x00 without carry (nRF5 SDK `gap_address_change`: `addr[0] += 1`
    /// on the least significant octet).
    public static func nextAddress(after address: String) -> String {
        var parts = address.uppercased().split(separator: ":").map(String.init)
        guard parts.count == 6, let last = UInt8(parts[5], radix: 16) else { return address }
        parts[5] = Hex.number(last &+ 1, digits: 2, prefix: false)
        return parts.joined(separator: ":")
    }

    /// The address in a BlueZ device path (`…/dev_AA_BB_CC_DD_EE_FF`), or nil.
    static func address(ofPath path: String) -> String? {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        let address = last.dropFirst(4).replacingOccurrences(of: "_", with: ":")
        return isAddress(address) ? address.uppercased() : nil
    }
}
