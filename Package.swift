// swift-tools-version:6.0
import PackageDescription

// One module per layer. Pure codecs and state machines at the bottom, platform code
// (libdbus) confined to `CDBus` + `DBus`, the command line at the top.
let package = Package(
    name: "bitflash",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "bitflash", targets: ["bitflash"]),
        .library(name: "Flashing", targets: ["Flashing"]),
        .library(name: "FirmwareImage", targets: ["FirmwareImage"]),
        .library(name: "SimulatedBoard", targets: ["SimulatedBoard"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.19"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // Firmware files: Intel HEX, Universal Hex, UF2, MCUboot, DFU zip, the MakeCode region.
        .target(name: "FirmwareImage", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        // Realistic MakeCode-style images the project makes itself (Samples/, tests, the demo).
        .target(name: "SampleFirmware", dependencies: [
            "FirmwareImage", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // RFC 8949 CBOR, no I/O.
        .target(name: "CBOR"),
        // McuMgr Simple Management Protocol frames over CBOR, no I/O.
        .target(name: "SMP", dependencies: ["CBOR"]),
        // The BLE connection abstraction and the event/action vocabulary of the flows.
        .target(name: "Transport"),
        // The micro:bit / Calliope partial-flashing frames, shared by clients and simulated boards. No I/O.
        .target(name: "PartialFlashingFrames"),
        // The partial-flashing client state machines.
        .target(name: "PartialFlashing", dependencies: ["FirmwareImage", "PartialFlashingFrames", "Transport"]),
        // McuMgr firmware-upgrade state machine.
        .target(name: "McuMgr", dependencies: ["SMP", "FirmwareImage", "Transport"]),
        // Nordic DFU (Secure DFU and legacy DFU) frames, init packets, checksums, GATT names and the
        // application cut, shared by clients and simulated bootloaders. No I/O.
        .target(name: "NordicDFUFrames", dependencies: [
            "FirmwareImage", "Transport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The Nordic DFU client state machines.
        .target(name: "NordicDFU", dependencies: ["FirmwareImage", "NordicDFUFrames", "Transport"]),
        // The BLE link model the estimates use: link profiles, air time, device timing, lower bounds.
        .target(name: "LinkModel", dependencies: ["Transport", "FirmwareImage"]),
        // The simulated board: flash memory, partial-flashing service, SMP server.
        .target(name: "SimulatedBoard", dependencies: [
            "FirmwareImage", "PartialFlashingFrames", "SMP", "CBOR", "LinkModel", "Transport", "NordicDFUFrames",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The flashing engine: decisions, fallback, sessions, drivers. The library API.
        .target(name: "Flashing", dependencies: [
            "FirmwareImage", "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU", "NordicDFUFrames", "SMP",
            "LinkModel", "Transport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The flashing session run on simulated boards, on virtual time: what a program tries the
        // library with before it meets a real board.
        .target(name: "SimulatedFlashing", dependencies: ["Flashing", "FirmwareImage", "LinkModel", "SimulatedBoard", "Transport"]),
        // SMP over UDP (Zephyr's port 1337 transport): the client transport and the flash over it.
        // The only client-side module that imports swift-nio.
        .target(name: "UDPTransport", dependencies: [
            "Flashing", "McuMgr", "SMP", "Transport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // A simulated board serving McuMgr over UDP in real time (`bitflash sim serve --udp`).
        .target(name: "SimulatedUDP", dependencies: [
            "SimulatedBoard", "UDPTransport", .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // libdbus, only imported by `DBus`.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .target(name: "DBus", dependencies: ["CDBus"]),
        // BlueZ backend of the transport.
        .target(name: "BlueZTransport", dependencies: ["DBus", "Transport"]),
        // A fake BlueZ (org.bluez on a private bus) playing simulated boards, for tests.
        .target(name: "FakeBlueZ", dependencies: ["DBus", "SimulatedBoard", "LinkModel", "Transport"]),
        // A simulated board in the peripheral role on the real BlueZ (GATT application + advertisement).
        .target(name: "BlueZPeripheral", dependencies: ["DBus", "SimulatedBoard", "LinkModel", "Transport"]),
        // The laboratory: the flash benchmark and the fault campaign on simulated boards. In no
        // library product; the command line and the tests use it.
        .target(name: "Laboratory", dependencies: [
            "Flashing", "SimulatedFlashing", "SimulatedBoard", "SampleFirmware", "FirmwareImage", "LinkModel",
            "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU", "NordicDFUFrames", "SMP", "CBOR", "Transport",
        ]),
        .executableTarget(name: "bitflash", dependencies: [
            "Flashing", "SimulatedFlashing", "Laboratory", "FirmwareImage", "SampleFirmware", "SimulatedBoard", "BlueZTransport", "UDPTransport", "SimulatedUDP", "FakeBlueZ", "BlueZPeripheral", "NordicDFU",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Samples/: short programs that use the library API (built by CI, run with `swift run`).
        .executableTarget(name: "sample-flash", dependencies: ["Flashing", "SimulatedFlashing", "FirmwareImage", "SampleFirmware", "SimulatedBoard"],
                          path: "Samples/FlashWithProgress"),
        .executableTarget(name: "sample-memory-map", dependencies: ["PartialFlashing", "FirmwareImage", "SampleFirmware", "SimulatedBoard"],
                          path: "Samples/MemoryMap"),

        .target(name: "TestSupport", dependencies: ["FirmwareImage", "SampleFirmware"], path: "Tests/TestSupport"),
        .testTarget(name: "FirmwareImageTests", dependencies: [
            "FirmwareImage", "TestSupport", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        .testTarget(name: "SampleFirmwareTests", dependencies: [
            "SampleFirmware", "FirmwareImage", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "TransportTests", dependencies: ["Transport"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "SMPTests", dependencies: ["SMP", "CBOR", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "PartialFlashingTests", dependencies: ["PartialFlashing", "FirmwareImage", "Transport", "TestSupport"]),
        .testTarget(name: "NordicDFUTests", dependencies: [
            "NordicDFU", "FirmwareImage", "SampleFirmware", "Transport", "TestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "McuMgrTests", dependencies: ["McuMgr", "SMP", "Transport", "TestSupport"]),
        .testTarget(name: "SimulatedBoardTests", dependencies: ["SimulatedBoard", "LinkModel", "PartialFlashing", "McuMgr", "NordicDFU", "SMP", "Transport", "TestSupport"]),
        .testTarget(name: "FlashingTests", dependencies: [
            "Flashing", "SimulatedFlashing", "Laboratory", "SimulatedBoard", "NordicDFU", "SampleFirmware", "TestSupport",
        ]),
        .testTarget(name: "LaboratoryTests", dependencies: [
            "Laboratory", "Flashing", "SimulatedBoard", "SampleFirmware", "FirmwareImage", "LinkModel", "PartialFlashing", "TestSupport",
        ]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "BlueZTransportTests", dependencies: ["BlueZTransport", "DBus", "Transport"]),
        // Runs the built bitflash against the fake org.bluez (`bitflash sim bluez`) on a private bus.
        .testTarget(name: "BlueZIntegrationTests", dependencies: [
            "TestSupport", "FirmwareImage", "SimulatedBoard", "BlueZTransport", "DBus", "Transport",
        ]),
        .testTarget(name: "FakeBlueZTests", dependencies: [
            "FakeBlueZ", "DBus", "SimulatedBoard", "PartialFlashing", "SMP", "FirmwareImage", "SampleFirmware", "Transport", "TestSupport",
        ]),
        .testTarget(name: "BlueZPeripheralTests", dependencies: [
            "BlueZPeripheral", "DBus", "SimulatedBoard", "SMP", "SampleFirmware", "FirmwareImage", "Transport", "TestSupport",
        ]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "FirmwareImage", "SampleFirmware"]),
        .testTarget(name: "SMPUDPTests", dependencies: [
            "UDPTransport", "SimulatedUDP", "Flashing", "McuMgr", "SMP", "SimulatedBoard", "FirmwareImage", "SampleFirmware", "Transport", "TestSupport",
        ]),
    ]
)
