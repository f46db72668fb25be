import Crypto
import FirmwareImage
import NordicDFUFrames
import SampleFirmware
import Testing
import TestSupport

@Suite struct InitPacketTests {
    @Test("The microbit_app init packet is 56 bytes: magic, version 1, size, hash size 32, reversed SHA-256")
    func microbitAppLayout() throws {
        let app = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let packet = MicrobitAppInitPacket(application: app).bytes
        #expect(packet.count == 56)
        #expect(Array(packet[0..<12]) == Array("microbit_app".utf8))
        #expect(Array(packet[12..<16]) == [1, 0, 0, 0])
        #expect(Array(packet[16..<20]) == [0xE8, 0x03, 0, 0])
        #expect(Array(packet[20..<24]) == [32, 0, 0, 0])
        #expect(Array(packet[24..<56]) == Array(SHA256.hash(data: app)).reversed())
        let decoded = try MicrobitAppInitPacket(bytes: packet)
        #expect(decoded.sha256 == Array(SHA256.hash(data: app)))
        #expect(decoded.applicationSize == 1000)
        #expect(throws: NordicDFUError.self) { try MicrobitAppInitPacket(bytes: Array(packet.dropLast())) }
        var noMagic = packet
        noMagic[0] = 0x4D
        #expect(throws: NordicDFUError.self) { try MicrobitAppInitPacket(bytes: noMagic) }
    }

    @Test("The legacy init packet is 14 bytes: wildcards, one SoftDevice (S110 8.0), CRC-16 of the binary")
    func legacyLayout() throws {
        let app = Array("123456789".utf8)
        let packet = LegacyInitPacket(application: app).bytes
        #expect(packet == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x64, 0x00, 0xB1, 0x29])
        #expect(try LegacyInitPacket(bytes: packet) == LegacyInitPacket(application: app))
        var two = packet
        two[8] = 2
        #expect(throws: NordicDFUError.self) { try LegacyInitPacket(bytes: two) }
    }

    @Test("The application binary is cut from the application start to the last data byte, gaps 0xFF, rounded to 4")
    func cutsLikeTheReferenceClients() throws {
        var image = MemoryImage()
        try image.write([0xAA, 0xBB], at: 0x1000)  // SoftDevice area: not part of the binary
        try image.write([1, 2, 3, 4], at: 0x1C000)
        try image.write([9, 9, 9], at: 0x1C010)  // ends at 0x1C013: rounded up to 0x1C014
        try image.write([7, 7], at: 0x77000)  // bootloader: not part of the binary
        let app = try DFUApplication.cut(from: image, family: .nrf52833)
        #expect(app.start == 0x1C000)
        #expect(app.bytes == [1, 2, 3, 4] + [UInt8](repeating: 0xFF, count: 12) + [9, 9, 9, 0xFF])
        let softDeviceOnly = image.slice(0..<0x18000)
        #expect(throws: NordicDFUError.noApplication(family: .nrf51)) {
            try DFUApplication.cut(from: softDeviceOnly, family: .nrf51)
        }
    }

    @Test("The sample images cut to the runtime and program; oversize applications are refused")
    func sampleImagesAndLimits() throws {
        for family in [ChipFamily.nrf52833, .nrf51] {
            let image = SampleFirmware.image(family: family, runtime: .r2, program: .counter)
            let app = try DFUApplication.cut(from: image, family: family)
            let programEnd =
                SampleFirmware.programAddress(family: family, runtime: .r2)
                + UInt32(SampleFirmware.programSize(family: family, program: .counter))
            #expect(app.start == family.layout.applicationStart)
            #expect(app.start + UInt32(app.bytes.count) == programEnd)
            #expect(app.bytes == image.read(app.start..<programEnd))
        }
        var big = MemoryImage()
        try big.write([1], at: 0x1C000)
        try big.write([1], at: 0x74000)
        #expect(throws: NordicDFUError.applicationTooLarge(bytes: 0x58004, maximum: 0x58000)) {
            try DFUApplication.cut(from: big, family: .nrf52833)
        }
    }

    @Test("The legacy init packet equals the one adafruit-nrfutil generates for the same binary")
    func legacyInitMatchesAdafruitNrfutil() throws {
        guard Python.has("nordicsemi.dfu.package") else {
            print("adafruit-nrfutil not installed: legacy init packet cross-check skipped")
            return
        }
        let image = SampleFirmware.image(family: .nrf51, runtime: .r1, program: .heart)
        let app = try DFUApplication.cut(from: image, family: .nrf51)
        let script = """
            import sys, os, tempfile, zipfile, glob
            from nordicsemi.dfu.package import Package
            d = tempfile.mkdtemp()
            binpath = os.path.join(d, 'app.bin')
            open(binpath, 'wb').write(bytes.fromhex(sys.stdin.read().strip()))
            p = Package(dev_type=0xFFFF, dev_rev=0xFFFF, app_version=0xFFFFFFFF, sd_req=[0x64], app_fw=binpath)
            z = os.path.join(d, 'pkg.zip')
            p.generate_package(z)
            with zipfile.ZipFile(z) as f:
                name = [n for n in f.namelist() if n.endswith('.dat')][0]
                print(f.read(name).hex())
            """
        let r = try Python.run(["-c", script], input: hex(app.bytes))
        #expect(r.status == 0)
        #expect(r.output.trimmingCharacters(in: .whitespacesAndNewlines) == hex(app.legacyInitPacket.bytes))
    }
}
