import TestSupport
import CBOR
import SMP
import Testing

@Suite("Cross-check with the Python smp package")
struct PythonSMPCrossCheckTests {
    /// Byte-for-byte comparison of every reference frame against `fixture` text.
    ///
    /// Key order: `smp` encodes with cbor2 `canonical=True` (shorter encoded keys
    /// first), the Swift encoder with RFC 8949 bytewise order. For text keys under
    /// 24 bytes, which is every SMP key, the length is in the first byte, so both
    /// orders are the same and the bytes can be compared directly.
    static func compare(against fixture: String) throws {
        let python = Fixture.frames(in: fixture)
        #expect(python.count == ReferenceFrame.all.count, "fixture and Swift table list different frames")
        for reference in ReferenceFrame.all {
            let pythonHex = try #require(python[reference.name], "no frame \(reference.name) in the fixture")
            #expect(hex(try reference.frame.encoded()) == pythonHex, "\(reference.name)")
            let decoded = try SMPFrame(bytes: try #require(bytes(hex: pythonHex)))
            #expect(decoded.header == reference.frame.header, "\(reference.name)")
            #expect(try reference.decodesToSameMessage(decoded), "\(reference.name)")
        }
    }

    @Test func swiftFramesEqualCommittedPythonFrames() throws {
        try Self.compare(against: try Fixture.text("smp-frames.txt"))
    }

    @Test(.enabled(if: pythonHas("smp"), "Python smp is not installed (pip install smp): live regeneration skipped"))
    func swiftFramesEqualFramesRegeneratedByPythonSMP() throws {
        let script = Fixture.directory.appendingPathComponent("make_smp_fixtures.py").path
        let result = try runPython([script, "-"])
        try #require(result.status == 0, "make_smp_fixtures.py failed")
        try Self.compare(against: result.output)
    }
}
