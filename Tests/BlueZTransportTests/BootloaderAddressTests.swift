import Testing
@testable import BlueZTransport

/// The address a stock Nordic bootloader built without bonds advertises at (nRF5 SDK
/// `nrf_dfu_ble.c` `gap_address_change`: `addr[0] += 1`, the least significant octet, which
/// is the last one of the text).
@Suite struct BootloaderAddressTests {
    @Test("the next address adds one to the last octet, wrapping FF to 00 without a carry")
    func nextAddress() {
        #expect(BlueZDevice.nextAddress(after: "F0:0D:00:00:00:01") == "F0:0D:00:00:00:02")
        #expect(BlueZDevice.nextAddress(after: "f0:0d:00:00:00:0f") == "F0:0D:00:00:00:10")
        #expect(BlueZDevice.nextAddress(after: "C4:12:34:56:78:FF") == "C4:12:34:56:78:00")
        #expect(BlueZDevice.nextAddress(after: "not an address") == "not an address")
    }

    @Test("a device path gives back its address")
    func addressOfPath() {
        #expect(BlueZDevice.address(ofPath: "/org/bluez/hci0/dev_F0_0D_00_00_00_02") == "F0:0D:00:00:00:02")
        #expect(BlueZDevice.address(ofPath: "/org/bluez/hci0") == nil)
        #expect(BlueZDevice.address(ofPath: "/org/bluez/hci0/dev_F0_0D") == nil)
    }
}
