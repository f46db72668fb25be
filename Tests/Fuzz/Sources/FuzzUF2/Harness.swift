import FirmwareImage

/// libFuzzer entry point: any bytes must either read as UF2 or throw a `FirmwareImageError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUF2(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    for family in [nil, UF2Family.nrf52833] {
        do {
            let file = try UF2File.parse(bytes, expectedFamily: family)
            // What was read must write and read back to the same flash contents.
            let again = try UF2File.parse(UF2File.encode(file.image, familyID: family))
            for segment in file.image.segments {
                precondition(again.image.read(segment.range) == segment.bytes, "round trip changed \(segment.range)")
            }
            _ = MicroPythonLayout.find(in: file.image, family: .nrf52833)
        } catch is FirmwareImageError {
        } catch {
            fatalError("UF2File.parse threw an error outside FirmwareImageError: \(error)")
        }
    }
    return 0
}
