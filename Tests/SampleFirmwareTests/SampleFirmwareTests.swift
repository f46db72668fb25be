import Crypto
import Testing
import FirmwareImage
@testable import SampleFirmware

/// Every address where the MakeCode magic starts in `image`.
private func magicAddresses(in image: MemoryImage) -> [UInt32] {
    var found: [UInt32] = []
    let magic = MakeCodeProgram.magic
    for segment in image.segments where segment.bytes.count >= magic.count {
        for i in 0...(segment.bytes.count - magic.count) where segment.bytes[i] == magic[0] {
            if segment.bytes[i..<(i + magic.count)].elementsEqual(magic) { found.append(segment.start + UInt32(i)) }
        }
    }
    return found
}

@Suite struct SampleFirmwareTests {
    @Test(arguments: [
        (ChipFamily.nrf52833, SampleFirmware.RuntimeID.r1, UInt32(0x47000)),
        (.nrf52833, .r2, 0x48000), (.nrf51, .r1, 0x35400), (.nrf51, .r2, 0x35C00)
    ])
    func magicIsOnlyWhereTheDeviceLooksForIt(family: ChipFamily, runtime: SampleFirmware.RuntimeID, address: UInt32) {
        for program in SampleFirmware.ProgramID.allCases {
            let image = SampleFirmware.image(family: family, runtime: runtime, program: program)
            #expect(magicAddresses(in: image) == [address])
            #expect(address % family.pageSize == 0)
            #expect(SampleFirmware.programAddress(family: family, runtime: runtime) == address)
        }
    }

    @Test(arguments: ChipFamily.allCases)
    func hashesFollowTheMakeCodeLayout(family: ChipFamily) {
        let image = SampleFirmware.image(family: family, runtime: .r1, program: .heart)
        let start = SampleFirmware.programAddress(family: family, runtime: .r1)
        let runtime = SampleFirmware.runtimeBytes(family: family, runtime: .r1)
        #expect(
            image.read(family.layout.applicationStart..<(family.layout.applicationStart + UInt32(runtime.count)))
                == runtime)
        #expect(image.read((start + 16)..<(start + 24)) == Array(SHA256.hash(data: runtime).prefix(8)))
        let programHash = image.read((start + 24)..<(start + 32))
        #expect([programHash[1], programHash[3], programHash[5], programHash[7]] == [0, 0, 0, 0])
        // The hash is over the program with pxt's placeholder in place.
        var program = SampleFirmware.programBytes(family: family, runtime: .r1, program: .heart)
        program.replaceSubrange(24..<32, with: SampleFirmware.placeholderProgramHash)
        let digest = Array(SHA256.hash(data: program))
        #expect(programHash == [digest[0], 0, digest[1], 0, digest[2], 0, digest[3], 0])
        // +34: program size in 8-byte units.
        let units =
            UInt16(image.read((start + 34)..<(start + 36))[0]) | UInt16(image.read((start + 35)..<(start + 36))[0]) << 8
        #expect(Int(units) * 8 == SampleFirmware.programSize(family: family, program: .heart))
    }

    @Test(arguments: ChipFamily.allCases)
    func hashesDifferBetweenProgramsAndRuntimes(family: ChipFamily) {
        let programHashes = SampleFirmware.ProgramID.allCases.map {
            SampleFirmware.programHash(family: family, runtime: .r1, program: $0)
        }
        #expect(Set(programHashes.map(\.hexString)).count == SampleFirmware.ProgramID.allCases.count)
        #expect(
            SampleFirmware.runtimeHash(family: family, runtime: .r1)
                != SampleFirmware.runtimeHash(family: family, runtime: .r2))
        // Same runtime, other program: only the program region differs.
        let heart = SampleFirmware.image(family: family, runtime: .r1, program: .heart)
        let counter = SampleFirmware.image(family: family, runtime: .r1, program: .counter)
        let start = SampleFirmware.programAddress(family: family, runtime: .r1)
        #expect(heart.slice(0..<start) == counter.slice(0..<start))
        #expect(heart != counter)
    }

    @Test func outputIsDeterministic() {
        for family in ChipFamily.allCases {
            let a = SampleFirmware.image(family: family, runtime: .r2, program: .large)
            let b = SampleFirmware.image(family: family, runtime: .r2, program: .large)
            #expect(a == b)
        }
    }

    @Test(arguments: ChipFamily.allCases)
    func layoutIsRealistic(family: ChipFamily) {
        let layout = family.layout
        for runtime in SampleFirmware.RuntimeID.allCases {
            for program in SampleFirmware.ProgramID.allCases {
                let image = SampleFirmware.image(family: family, runtime: runtime, program: program)
                let end =
                    SampleFirmware.programAddress(family: family, runtime: runtime)
                    + UInt32(SampleFirmware.programSize(family: family, program: program))
                #expect(end <= layout.scratchPage, "program must end below the scratch page")
                #expect(!image.hasData(in: end..<layout.bootloaderStart))
                #expect(image.hasData(in: 0..<0x1000) && image.hasData(in: 0x1000..<layout.applicationStart))
                #expect(image.hasData(in: layout.bootloaderStart..<layout.flashSize))
                let uicr = image.read(0x1000_1014..<0x1000_1018)
                #expect(
                    uicr == [
                        UInt8(layout.bootloaderStart & 0xFF), UInt8(layout.bootloaderStart >> 8 & 0xFF),
                        UInt8(layout.bootloaderStart >> 16 & 0xFF), 0
                    ])
            }
        }
        let runtimeKiB = SampleFirmware.runtimeSize(family: family, runtime: .r1) / 1024
        #expect(family == .nrf52833 ? (150...180).contains(runtimeKiB) : (100...120).contains(runtimeKiB))
        #expect(SampleFirmware.programSize(family: family, program: .heart) / 1024 == 5)
    }
}
