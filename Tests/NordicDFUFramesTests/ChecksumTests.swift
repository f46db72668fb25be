import Crypto
import NordicDFUFrames
import Testing
import TestSupport

@Suite struct ChecksumTests {
    @Test("CRC-32 has the ISO-HDLC check value and a running value equal to one pass")
    func crc32CheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        let data = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var running = CRC32()
        running.update(data[0..<1234])
        running.update(data[1234...])
        #expect(running.value == CRC32.checksum(data))
    }

    @Test("CRC-32 equals Python's zlib.crc32 on varied data")
    func crc32MatchesZlib() throws {
        guard Python.has("zlib") else { print("python3 not found: zlib cross-check skipped"); return }
        let samples: [[UInt8]] = [
            [0], [0xFF], Array(repeating: 0xFF, count: 4096),
            (0..<777).map { UInt8(truncatingIfNeeded: $0 * $0 + 3) }
        ]
        for sample in samples {
            let r = try Python.run(
                ["-c", "import sys,zlib; print(zlib.crc32(bytes.fromhex(sys.stdin.read().strip())))"],
                input: hex(sample))
            #expect(r.status == 0)
            #expect(UInt32(r.output.trimmingCharacters(in: .whitespacesAndNewlines)) == CRC32.checksum(sample))
        }
    }

    @Test("CRC-16/CCITT-FALSE has the check value 0x29B1")
    func crc16CheckValue() {
        #expect(CRC16.ccittFalse(Array("123456789".utf8)) == 0x29B1)
        #expect(CRC16.ccittFalse([UInt8]()) == 0xFFFF)
    }

    @Test("CRC-16/CCITT-FALSE equals Python's binascii.crc_hqx with initial value 0xFFFF")
    func crc16MatchesPython() throws {
        guard Python.has("binascii") else { print("python3 not found: crc_hqx cross-check skipped"); return }
        let sample = (0..<3001).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let r = try Python.run(
            ["-c", "import sys,binascii; print(binascii.crc_hqx(bytes.fromhex(sys.stdin.read().strip()), 0xFFFF))"],
            input: hex(sample))
        #expect(UInt16(r.output.trimmingCharacters(in: .whitespacesAndNewlines)) == CRC16.ccittFalse(sample))
    }
}
