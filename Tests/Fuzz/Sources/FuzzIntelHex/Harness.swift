import FirmwareImage

/// libFuzzer entry point for the Intel HEX and Universal Hex reader: any bytes must either read
/// or throw a `FirmwareImageError`. What was read must write and read back to the same image.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIntelHex(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let file = try IntelHexReader.parse(bytes)
        for section in file.sections {
            let again = try IntelHexReader.parse(IntelHexWriter.write(section.image))
            precondition(again.sections.count <= 1, "a written plain hex read back as \(again.sections.count) sections")
            precondition(
                (again.sections.first?.image ?? MemoryImage()) == section.image,
                "plain hex round trip changed the image")
            _ = ChipFamily.guess(from: section.image)
        }
        let sections = file.sections.compactMap { s in
            s.boardID.map { UniversalHexWriter.Section(boardID: $0, image: s.image) }
        }
        if file.isUniversalHex, sections.count == file.sections.count {
            let again = try IntelHexReader.parse(UniversalHexWriter.write(sections))
            precondition(again.sections.count == sections.count, "Universal Hex round trip changed the sections")
            for (a, b) in zip(sections, again.sections) {
                precondition(a.image == b.image, "Universal Hex round trip changed board \(a.boardID)'s image")
            }
        }
    } catch is FirmwareImageError {
    } catch {
        fatalError("IntelHexReader threw an error outside FirmwareImageError: \(error)")
    }
    return 0
}
