import Testing
@testable import FirmwareImage

/// Finding the program the way the device does, on images the tests build.
@Suite struct MakeCodeProgramTests {
    @Test("finds the magic page, the hashes and the region", arguments: ChipFamily.allCases)
    func findsTheProgram(_ family: ChipFamily) throws {
        let built = HexFixtures.makeCode(family, programSize: 5152, seed: 1)
        let p = try MakeCodeProgram.locate(in: built.image, family: family)
        #expect(p.magicAddress == built.magicAddress)
        #expect(p.magicAddress == (family == .nrf51 ? 0x35400 : 0x47000))
        #expect(p.runtimeHash == built.runtimeHash)
        #expect(p.programHash == built.programHash)
        #expect(p.region == built.magicAddress..<(built.magicAddress + 5184))  // 5152 rounded up to 64
        #expect(p.blockCount == 81)
        #expect(p.pageCount(pageSize: family.pageSize) == (family == .nrf51 ? 6 : 2))
    }

    @Test func ignoresAFalseMagicInsideTheRuntime() throws {
        // 0xFCD4 into the runtime: not page-aligned, like MakeCode 3.0.67's CODAL at 0x2BCD4.
        let built = HexFixtures.makeCode(.nrf52833, seed: 2, falseMagicAt: 0xFCD4)
        #expect(MakeCodeProgram.magicAddresses(in: built.image) == [0x2BCD4, built.magicAddress])
        #expect(MakeCodeProgram.find(in: built.image, family: .nrf52833)?.magicAddress == built.magicAddress)
    }

    @Test func reportsWhyThereIsNoProgram() throws {
        let built = HexFixtures.makeCode(.nrf51, small: true, seed: 3)
        // No magic at all.
        var none = built.image
        try none.write([0x71], at: built.magicAddress, overwrite: true)  // MakeCode's "disabled variant"
        #expect(throws: FirmwareImageError.noMakeCodeProgram(.noMagic, family: .nrf51)) {
            try MakeCodeProgram.locate(in: none, family: .nrf51)
        }
        // Only an unaligned one (2016 PXT).
        var unaligned = none
        try unaligned.write(MakeCodeProgram.magic, at: built.magicAddress + 0x130, overwrite: true)
        #expect(
            throws: FirmwareImageError.noMakeCodeProgram(
                .notPageAligned(addresses: [built.magicAddress + 0x130], pageSize: 1024),
                family: .nrf51)
        ) {
            try MakeCodeProgram.locate(in: unaligned, family: .nrf51)
        }
        // Page-aligned, but in the scratch page.
        var scratch = none
        try scratch.write(MakeCodeProgram.magic, at: 0x3B400)
        #expect(
            throws: FirmwareImageError.noMakeCodeProgram(
                .outsideApplicationRegion(addresses: [0x3B400], searched: 0x18000..<0x3B400),
                family: .nrf51)
        ) {
            try MakeCodeProgram.locate(in: scratch, family: .nrf51)
        }
        // The same image is a V1 image: a V2 search finds nothing there either.
        #expect(MakeCodeProgram.find(in: built.image, family: .nrf52833) == nil)
    }

    @Test func regionEndsAtTheLastDataBelowTheScratchPage() throws {
        var image = HexFixtures.makeCode(.nrf51, small: true, programSize: 100, seed: 4).image
        let magic = try MakeCodeProgram.locate(in: image, family: .nrf51).magicAddress
        #expect(try MakeCodeProgram.locate(in: image, family: .nrf51).region == magic..<(magic + 128))
        // Data further up (e.g. source embedded in flash) belongs to the region; the scratch page does not.
        try image.write([1, 2, 3], at: 0x3A000)
        try image.write([UInt8](repeating: 0xFF, count: 0x400), at: 0x3B400)
        #expect(try MakeCodeProgram.locate(in: image, family: .nrf51).region == magic..<0x3A040)
    }

    @Test func chipGuessUsesUICRThenTheVectorTable() throws {
        #expect(ChipFamily.guess(from: HexFixtures.makeCode(.nrf51, small: true).image) == .nrf51)
        #expect(ChipFamily.guess(from: HexFixtures.makeCode(.nrf52833, small: true).image) == .nrf52833)
        var sp = MemoryImage()
        try sp.write([0x00, 0x00, 0x02, 0x20], at: 0)
        #expect(ChipFamily.guess(from: sp) == .nrf52833)
        var nrf52840 = MemoryImage()
        try nrf52840.write([0x00, 0x04, 0x00, 0x20], at: 0)
        #expect(ChipFamily.guess(from: nrf52840) == nil)
        // An nRF51 vector table with data past 256 KiB is not an nRF51 image.
        var big = MemoryImage()
        try big.write([0x00, 0x40, 0x00, 0x20], at: 0)
        try big.write([1], at: 0x50000)
        #expect(ChipFamily.guess(from: big) == nil)
    }
}
