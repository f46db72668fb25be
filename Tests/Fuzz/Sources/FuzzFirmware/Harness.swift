import FirmwareImage

/// libFuzzer entry point for the front door: `Firmware.parse` detects the format (Intel HEX,
/// Universal Hex, UF2, MCUboot, DFU zip) and reads it. Any bytes must either read or throw a
/// `FirmwareImageError`; every board's section lookup and the MakeCode program search must then
/// answer without a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFirmware(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    for name in ["fuzz.bin", "fuzz.hex"] {
        do {
            let firmware = try Firmware.parse(bytes, fileName: name)
            _ = firmware.allWarnings.map(\.description)
            for board in Board.allCases {
                guard let section = try? firmware.section(for: board) else { continue }
                _ = section.name
                do {
                    _ = try MakeCodeProgram.locate(in: section.image, family: board.family)
                } catch is FirmwareImageError {}
                _ = MicroPythonLayout.find(in: section.image, family: board.family)
            }
            if let image = firmware.mcuboot { _ = image.hashCheck }
        } catch let error as FirmwareImageError {
            _ = error.description
        } catch {
            fatalError("Firmware.parse threw an error outside FirmwareImageError: \(error)")
        }
    }
    return 0
}
