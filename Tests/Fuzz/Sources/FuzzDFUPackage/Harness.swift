import FirmwareImage

/// libFuzzer entry point: any bytes must either read as a DFU package or throw a `FirmwareImageError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDFUPackage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let package = try DFUPackage(zipBytes: bytes)
        for image in package.images { _ = image.mcubootImage }
    } catch is FirmwareImageError {
    } catch {
        fatalError("DFUPackage threw an error outside FirmwareImageError: \(error)")
    }
    return 0
}
