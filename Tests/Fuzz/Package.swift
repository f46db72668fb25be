// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets over the firmware-format parsers. Not part of the main package:
// build and run them with `Tests/Fuzz/run.sh TARGET`, which passes the sanitizer flags.
// One executable per parser; a new parser needs one more target and harness file.
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
    ]
)
