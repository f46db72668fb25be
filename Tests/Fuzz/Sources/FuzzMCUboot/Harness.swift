import FirmwareImage

/// libFuzzer entry point: any bytes must either read as an MCUboot image or throw a `FirmwareImageError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMCUboot(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let image = try MCUbootImage(bytes: bytes)
        _ = image.reportedHash
        // Rebuilding the body with the same header fields must give an image with a valid hash.
        if !image.header.flags.isEncrypted, image.body.count < 1 << 20 {
            let rebuilt = try MCUbootImage.build(
                application: Array(image.body), loadAddress: image.header.loadAddress,
                version: image.version, headerSize: image.header.headerSize)
            let check = try MCUbootImage(bytes: rebuilt).hashCheck
            precondition(check == .valid, "rebuilt image has hash check \(check)")
        }
    } catch is FirmwareImageError {
    } catch {
        fatalError("MCUbootImage threw an error outside FirmwareImageError: \(error)")
    }
    return 0
}
