// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets over the firmware-format parsers, the CBOR and SMP decoders and the
// client state machines. Not part of the main package: build and run them with
// `Tests/Fuzz/run.sh TARGET`, which passes the sanitizer flags.
// One executable per target; a new one needs one more target and harness file.
let package = Package(
    name: "bitflash-fuzz",
    dependencies: [.package(name: "bitflash", path: "../..")],
    targets: [
        .executableTarget(name: "FuzzUF2", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzMCUboot", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzDFUPackage", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzIntelHex", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        .executableTarget(name: "FuzzFirmware", dependencies: [.product(name: "FirmwareImage", package: "bitflash")]),
        // The frame decoders are modules of the `ProtocolFrames` product, the flows of the `Flashing`
        // product (which contains the frames they use); the harnesses import the modules directly.
        .target(name: "FuzzEvents", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzCBOR", dependencies: [.product(name: "ProtocolFrames", package: "bitflash")]),
        .executableTarget(name: "FuzzSMP", dependencies: [.product(name: "ProtocolFrames", package: "bitflash")]),
        // The sample firmware the partial flow is fed is part of the `Simulation` product.
        .executableTarget(
            name: "FuzzPartialFlow",
            dependencies: [
                "FuzzEvents", .product(name: "Flashing", package: "bitflash"),
                .product(name: "Simulation", package: "bitflash")
            ]),
        .executableTarget(
            name: "FuzzMcuMgrFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
        .executableTarget(name: "FuzzNordicFrames", dependencies: [.product(name: "Flashing", package: "bitflash")]),
        .executableTarget(
            name: "FuzzSecureDFUFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")]),
        .executableTarget(
            name: "FuzzLegacyDFUFlow", dependencies: ["FuzzEvents", .product(name: "Flashing", package: "bitflash")])
    ]
)
