// swift-tools-version:6.0
import PackageDescription

// One module per layer, bottom up: the shared vocabulary (Diagnostics, Transport), the firmware
// formats, the protocol frames, the flows and the session, the backends (libdbus confined to
// `CDBus` + `DBus`), the simulation, the laboratory and the command line on top.
// `scripts/check-layers` checks the imports against these declarations and layers.
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")

let package = Package(
    name: "bitflash",
    products: [
        .executable(name: "bitflash", targets: ["bitflash"]),
        .executable(name: "bitflash-lab", targets: ["bitflash-lab"]),
        // The class page (`bitflash serve` runs it): its own executable, so bitflash carries no web server.
        .executable(name: "bitflash-serve", targets: ["bitflash-serve"]),
        // The firmware formats.
        .library(name: "FirmwareImage", targets: ["FirmwareImage"]),
        // The protocol frames, shared by clients and simulated boards.
        .library(name: "ProtocolFrames", targets: ["CBOR", "SMP", "PartialFlashingFrames", "NordicDFUFrames"]),
        // The flows and the session: what a program needs to flash a board through a transport.
        .library(name: "Flashing", targets: ["Flashing"]),
        // The backends: BlueZ over D-Bus (the transport, and flashing real boards through it),
        // and SMP over UDP.
        .library(name: "BlueZTransport", targets: ["BlueZTransport", "BlueZFlashing"]),
        .library(name: "UDPTransport", targets: ["UDPTransport"]),
        // Simulated boards, the link simulation, the fakes and sample firmware, for tests and trials.
        // The one flasher over the backends: the policy every front door shares.
        .library(name: "Flasher", targets: ["Flasher"]),
        .library(name: "Simulation", targets: [
            "SimulatedBoard", "SimulatedFlashing", "SampleFirmware", "FakeBlueZ", "BlueZPeripheral", "SimulatedUDP",
        ]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.19"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
    ],
    targets: [
        // The vocabulary every layer shares: failure kinds, hexadecimal text, little-endian bytes.
        .target(name: "Diagnostics"),
        // The BLE connection abstraction and the event/action vocabulary of the flows.
        .target(name: "Transport", dependencies: ["Diagnostics"]),
        // The POSIX file calls of the command line (descriptors, stat, links, locks): with DBus, the
        // only module whose code holds unsafe pointers.
        .target(name: "SystemFiles"),

        // Firmware files: Intel HEX, Universal Hex, UF2, MCUboot, DFU zip, the MakeCode region.
        .target(name: "FirmwareImage", dependencies: [
            "Diagnostics", crypto, .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),

        // Protocol frames: value types with one encoder and one decoder, no flows, no I/O.
        // RFC 8949 CBOR.
        .target(name: "CBOR", dependencies: ["Diagnostics"]),
        // McuMgr Simple Management Protocol frames over CBOR.
        .target(name: "SMP", dependencies: ["CBOR", "Diagnostics", "Transport"]),
        // The micro:bit / Calliope partial-flashing frames.
        .target(name: "PartialFlashingFrames", dependencies: ["Diagnostics", "Transport"]),
        // Nordic DFU (Secure and legacy) frames, init packets, checksums, GATT names, the application cut.
        .target(name: "NordicDFUFrames", dependencies: ["Diagnostics", "FirmwareImage", "PartialFlashingFrames", "Transport", crypto]),

        // Flows (sans-I/O state machines) and the session.
        // The partial-flashing client: memory map, decision, block writer.
        .target(name: "PartialFlashing", dependencies: ["Diagnostics", "FirmwareImage", "PartialFlashingFrames", "Transport"]),
        // The McuMgr firmware upgrade and the image-state read.
        .target(name: "McuMgr", dependencies: ["Diagnostics", "SMP", "FirmwareImage", "Transport", crypto]),
        // The Nordic DFU clients (Secure and legacy DFU).
        .target(name: "NordicDFU", dependencies: ["FirmwareImage", "NordicDFUFrames", "Transport"]),
        // The BLE link model the estimates use: link profiles, air time, device timing, lower bounds.
        .target(name: "LinkModel", dependencies: ["Diagnostics", "FirmwareImage", "Transport"]),
        // The flashing session: decisions, estimates, fallback, options, results, the async driver.
        .target(name: "Flashing", dependencies: [
            "Diagnostics", "FirmwareImage", "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU",
            "NordicDFUFrames", "SMP", "LinkModel", "Transport", crypto,
        ]),

        // Backends. libdbus, only imported by `DBus`: loaded when first used (dlopen), not linked,
        // so that commands that talk to no bus do not load it and what it pulls in.
        .target(name: "CDBus"),
        .target(name: "DBus", dependencies: ["CDBus", "Diagnostics"]),
        // The BlueZ backend of the transport.
        .target(name: "BlueZTransport", dependencies: [
            "DBus", "Diagnostics", "PartialFlashingFrames", "SMP", "Transport",
        ]),
        // Real boards through BlueZ: find them, flash one or many (progress as an AsyncSequence),
        // resume records, cancellation. What `bitflash scan` and `flash --device` run.
        .target(name: "BlueZFlashing", dependencies: [
            "BlueZTransport", "DBus", "Diagnostics", "FirmwareImage", "Flashing", "LinkModel", "McuMgr", "NordicDFUFrames",
            "PartialFlashing", "PartialFlashingFrames", "SMP", "Transport",
        ]),
        // SMP over UDP (Zephyr's port 1337 transport): the client transport and the flash over it.
        // The only client-side module that imports swift-nio.
        .target(name: "UDPTransport", dependencies: [
            "Diagnostics", "Flashing", "McuMgr", "SMP", "Transport", nioCore,
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),

        // The simulation. The simulated board: flash memory, the partial-flashing service, the SMP
        // server, the Nordic bootloaders, the link on virtual time, traces and their file format.
        .target(name: "SimulatedBoard", dependencies: [
            "Diagnostics", "FirmwareImage", "PartialFlashingFrames", "NordicDFUFrames", "SMP", "CBOR", "LinkModel",
            "Transport", crypto,
        ]),
        // Realistic MakeCode-style images the project makes itself (Samples/, tests, the demo).
        .target(name: "SampleFirmware", dependencies: ["Diagnostics", "FirmwareImage", crypto]),
        // The flashing session run on simulated boards, on virtual time: what a program tries the
        // library with before it meets a real board.
        .target(name: "SimulatedFlashing", dependencies: ["Flashing", "FirmwareImage", "LinkModel", "SimulatedBoard", "Transport"]),
        // A fake BlueZ (org.bluez on a private bus) playing simulated boards, for tests.
        .target(name: "FakeBlueZ", dependencies: [
            "DBus", "Diagnostics", "FirmwareImage", "NordicDFUFrames", "SimulatedBoard", "LinkModel", "Transport",
        ]),
        // A simulated board in the peripheral role on the real BlueZ (GATT application + advertisement).
        .target(name: "BlueZPeripheral", dependencies: [
            "DBus", "Diagnostics", "NordicDFUFrames", "SimulatedBoard", "LinkModel", "Transport",
        ]),
        // A simulated board serving McuMgr over UDP in real time (`bitflash sim serve --udp`).
        .target(name: "SimulatedUDP", dependencies: ["SimulatedBoard", "UDPTransport", nioCore]),

        // The one flasher behind every front door: the policy (the file read for each board, resume
        // records, class forecasts, the class run's record) over the backends (real boards through
        // BlueZ, simulated boards, SMP over UDP).
        .target(name: "Flasher", dependencies: [
            "BlueZFlashing", "Diagnostics", "FirmwareImage", "Flashing", "LinkModel", "PartialFlashingFrames", "SimulatedBoard",
            "SimulatedFlashing", "Transport", "UDPTransport",
        ]),

        // The laboratory: the flash benchmark and the fault campaign on simulated boards. In no
        // library product; the command line and the tests use it.
        .target(name: "Laboratory", dependencies: [
            "Diagnostics", "Flashing", "SimulatedFlashing", "SimulatedBoard", "SampleFirmware", "FirmwareImage", "LinkModel",
            "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU", "NordicDFUFrames", "SMP", "CBOR", "Transport",
        ]),

        // Stamps the command line with the git commit it is built from (`bitflash --version`).
        .plugin(name: "CommitStamp", capability: .buildTool()),
        // The commands of both executables: parsing, wording and output over the library's
        // policy (no policy of their own). Root/ is the entry, User/ what `bitflash` offers,
        // Laboratory/ what only `bitflash-lab` offers.
        .target(name: "Commands", dependencies: [
            "Diagnostics", "FirmwareImage", "Flashing", "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU",
            "NordicDFUFrames", "SMP", "LinkModel", "Transport", "DBus", "BlueZTransport", "BlueZFlashing", "UDPTransport",
            "SimulatedBoard", "SimulatedFlashing", "SampleFirmware", "FakeBlueZ", "BlueZPeripheral", "SimulatedUDP",
            "Flasher", "Laboratory", "SystemFiles", crypto,
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], plugins: ["CommitStamp"]),
        // What a user flashes with: flash, watch, scan, info, forget, plan, demo, inspect, convert, sim reset/show.
        .executableTarget(name: "bitflash", dependencies: ["Commands"]),
        // The laboratory: benchmarks, the fault campaign, traces and replay, simulated boards served
        // over UDP and BlueZ, fault injection.
        .executableTarget(name: "bitflash-lab", dependencies: ["Commands"]),

        // The class page: a local web page to flash a class set, over the one Flasher (Hummingbird:
        // routes, the checks on every request, the events as JSON, the page itself).
        .target(name: "ClassPage", dependencies: [
            "BlueZFlashing", "BlueZTransport", "FirmwareImage", "Flasher", "Flashing", "Laboratory", "LinkModel",
            "SimulatedBoard", "SimulatedFlashing", "Transport", .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "bitflash-serve", dependencies: [
            "BlueZFlashing", "ClassPage", "Flasher", "Flashing", "Laboratory", "LinkModel",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Samples/: short programs that use the library API (built by CI, run with `swift run`).
        .executableTarget(name: "sample-flash", dependencies: ["Flasher", "Flashing", "SimulatedFlashing", "FirmwareImage", "SampleFirmware", "SimulatedBoard"],
                          path: "Samples/FlashWithProgress"),
        .executableTarget(name: "sample-flash-bluez", dependencies: ["BlueZFlashing", "Diagnostics", "Flasher", "Flashing", "FirmwareImage"],
                          path: "Samples/FlashOverBlueZ"),
        .executableTarget(name: "sample-memory-map", dependencies: ["PartialFlashing", "FirmwareImage", "SampleFirmware", "SimulatedBoard"],
                          path: "Samples/MemoryMap"),

        .target(name: "TestSupport", dependencies: ["FirmwareImage", "SampleFirmware"], path: "Tests/TestSupport"),
        .testTarget(name: "FirmwareImageTests", dependencies: [
            "FirmwareImage", "Diagnostics", "TestSupport", crypto, .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        .testTarget(name: "SampleFirmwareTests", dependencies: ["Diagnostics", "SampleFirmware", "FirmwareImage", "TestSupport", crypto]),
        .testTarget(name: "DiagnosticsTests", dependencies: ["Diagnostics"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport"]),
        .testTarget(name: "SystemFilesTests", dependencies: ["SystemFiles"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "SMPTests", dependencies: ["SMP", "CBOR", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "PartialFlashingTests", dependencies: [
            "PartialFlashing", "PartialFlashingFrames", "Diagnostics", "FirmwareImage", "NordicDFUFrames", "Transport", "TestSupport",
        ]),
        .testTarget(name: "PartialFlashingFramesTests", dependencies: ["PartialFlashingFrames", "Transport"]),
        .testTarget(name: "NordicDFUFramesTests", dependencies: [
            "NordicDFUFrames", "FirmwareImage", "SampleFirmware", "TestSupport", crypto,
        ]),
        .testTarget(name: "LinkModelTests", dependencies: ["LinkModel", "FirmwareImage"]),
        .testTarget(name: "NordicDFUTests", dependencies: [
            "NordicDFU", "NordicDFUFrames", "FirmwareImage", "PartialFlashingFrames", "SampleFirmware", "Transport", "TestSupport",
            crypto,
        ]),
        .testTarget(name: "McuMgrTests", dependencies: [
            "McuMgr", "SMP", "CBOR", "FirmwareImage", "PartialFlashingFrames", "Transport", "TestSupport", crypto,
        ]),
        .testTarget(name: "SimulatedBoardTests", dependencies: [
            "SimulatedBoard", "FirmwareImage", "LinkModel", "PartialFlashing", "PartialFlashingFrames", "McuMgr", "NordicDFU",
            "NordicDFUFrames", "SMP", "CBOR", "Transport", "TestSupport", crypto,
        ]),
        .testTarget(name: "FlashingTests", dependencies: [
            "Flashing", "SimulatedFlashing", "Laboratory", "SimulatedBoard", "FirmwareImage", "LinkModel", "McuMgr", "PartialFlashing",
            "PartialFlashingFrames", "NordicDFU", "NordicDFUFrames", "SampleFirmware", "Transport", "TestSupport", "SMP", "Diagnostics",
        ]),
        .testTarget(name: "LaboratoryTests", dependencies: [
            "Laboratory", "Flashing", "SimulatedFlashing", "SimulatedBoard", "SampleFirmware", "FirmwareImage", "LinkModel",
            "PartialFlashing", "TestSupport",
        ]),
        // CDBus is tested through DBus (its loader: LibraryLoadingTests).
        .testTarget(name: "DBusTests", dependencies: ["DBus", "CDBus", "TestSupport"]),
        .testTarget(name: "BlueZTransportTests", dependencies: [
            "BlueZTransport", "DBus", "NordicDFUFrames", "PartialFlashingFrames", "SMP", "Transport",
        ]),
        // Runs the built bitflash against the fake org.bluez (`bitflash sim bluez`) on a private bus.
        .testTarget(name: "BlueZIntegrationTests", dependencies: [
            "TestSupport", "FirmwareImage", "SimulatedBoard", "BlueZTransport", "BlueZFlashing", "Flashing", "DBus", "Transport",
            "SimulatedFlashing", "SampleFirmware", "Flasher", "Laboratory", "Commands", "Diagnostics", "PartialFlashingFrames",
        ]),
        .testTarget(name: "FakeBlueZTests", dependencies: [
            "FakeBlueZ", "DBus", "SimulatedBoard", "PartialFlashing", "PartialFlashingFrames", "NordicDFUFrames", "SMP", "FirmwareImage",
            "SampleFirmware", "Transport", "TestSupport",
        ]),
        .testTarget(name: "BlueZPeripheralTests", dependencies: [
            "BlueZPeripheral", "DBus", "SimulatedBoard", "NordicDFUFrames", "PartialFlashingFrames", "SMP", "SampleFirmware", "FirmwareImage", "Transport", "TestSupport",
        ]),
        .testTarget(name: "ClassPageTests", dependencies: [
            "ClassPage", "FirmwareImage", "Flasher", "Flashing", "Laboratory", "SampleFirmware", "SimulatedBoard",
        ]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "Commands", "Diagnostics", "Flashing", "FirmwareImage", "SampleFirmware"]),
        // The modules tested on their own: the BlueZ flasher's waves and claims, the UDP transport,
        // the simulated board's UDP server and the session on simulated boards.
        .testTarget(name: "BlueZFlashingTests", dependencies: ["BlueZFlashing"]),
        .testTarget(name: "UDPTransportTests", dependencies: ["UDPTransport", "Transport", nioCore]),
        .testTarget(name: "SimulatedUDPTests", dependencies: [
            "SimulatedUDP", "UDPTransport", "SimulatedBoard", "Flashing", "FirmwareImage", "SampleFirmware", "SMP", nioCore,
        ]),
        .testTarget(name: "SimulatedFlashingTests", dependencies: [
            "SimulatedFlashing", "Flashing", "SimulatedBoard", "FirmwareImage", "SampleFirmware",
        ]),
        // SMP over UDP, both sides: the client transport against the simulated server and third-party clients.
        .testTarget(name: "SMPUDPTests", dependencies: [
            "UDPTransport", "SimulatedUDP", "Flashing", "SimulatedFlashing", "McuMgr", "SMP", "SimulatedBoard", "FirmwareImage",
            "SampleFirmware", "Transport", "TestSupport",
        ]),
    ]
)
