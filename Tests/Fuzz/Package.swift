// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets over the firmware-format parsers, the CBOR and SMP decoders and the
// client state machines. Not part of the main package: build and run them with
// `Tests/Fuzz/run.sh TARGET`, which passes the sanitizer flags.
// One executable per target; a new one needs one more target and harness file.
let package = Package(
    name: "bitflash-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "bitflash", path: "../..")],
    targets: [
        .executableTarget(name: "FuzzUF2", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzMCUboot", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzDFUPackage", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzIntelHex", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzFirmware", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        // The decoders and flows are modules of the `Flashing` product; the harnesses import them directly.
        .target(name: "FuzzEvents", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzCBOR", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzSMP", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzPartialFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzMcuMgrFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzNordicFrames", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzSecureDFUFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzLegacyDFUFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
    ]
)
