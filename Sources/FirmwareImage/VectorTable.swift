import Diagnostics

extension ChipFamily {
    /// The chip's RAM, for the initial stack pointer a vector table may set: 32 KiB on nRF51822
    /// (the QFAC part of the Calliope mini 2; micro:bit V1's QFAA has 16 KiB, and MakeCode's
    /// Calliope mini 1/2 builds set the top of 32 KiB), 128 KiB on nRF52833.
    public var ram: Range<UInt32> { 0x2000_0000..<(self == .nrf51 ? 0x2000_8000 : 0x2002_0000) }
}

/// The start of an Arm Cortex-M vector table: the initial stack pointer (word 0) and the reset
/// handler (word 1), which the chip or the bootloader that starts an image loads first. Code built
/// for another chip shows here: its stack pointer lies outside the chip's RAM, its reset handler
/// outside the flash the image occupies on this board (an i.MX RT image runs from 0x60000000).
struct VectorTable: Equatable {
    /// Where the table lies on the board.
    var address: UInt32
    var stackPointer: UInt32
    var resetHandler: UInt32

    init(address: UInt32, stackPointer: UInt32, resetHandler: UInt32) {
        self.address = address
        self.stackPointer = stackPointer
        self.resetHandler = resetHandler
    }

    /// The table at `address` of `image`; nil when the image holds no data there.
    init?(in image: MemoryImage, at address: UInt32) {
        guard image.hasData(in: address..<(address + 8)) else { return nil }
        let words = image.read(address..<(address + 8))
        guard let stackPointer = try? LEBytes.u32(words, 0), let resetHandler = try? LEBytes.u32(words, 4) else {
            return nil
        }
        self.init(address: address, stackPointer: stackPointer, resetHandler: resetHandler)
    }

    /// The table at the start of `code`, placed at `address`; nil when it is shorter than two words.
    init?(code: ArraySlice<UInt8>, at address: UInt32) {
        guard code.count >= 8 else { return nil }
        let words = Array(code.prefix(8))
        guard let stackPointer = try? LEBytes.u32(words, 0), let resetHandler = try? LEBytes.u32(words, 4) else {
            return nil
        }
        self.init(address: address, stackPointer: stackPointer, resetHandler: resetHandler)
    }

    /// True when the stack pointer is a word-aligned address in `ram` (or its end: the stack
    /// grows down from there) and the reset handler a Thumb address (bit 0 set) inside `code`.
    func fits(ram: Range<UInt32>, code: Range<UInt32>) -> Bool {
        stackPointer > ram.lowerBound && stackPointer <= ram.upperBound && stackPointer % 4 == 0
            && resetHandler & 1 == 1 && code.contains(resetHandler & ~1)
    }

    /// The problem that says the code is for another chip.
    /// - Parameter where: where the board would find the code, in words (`the application start`).
    func problem(board: Board, code: Range<UInt32>, where place: String) -> BoardProblem {
        let family = board.family
        let ram = family.ram
        return BoardProblem(
            .vectorTable,
            "the code the board would start at \(Hex.address(address)) (\(place)) is not for a \(board.displayName)'s "
                + "\(family.chipName): its vector table sets the stack pointer to \(Hex.address(stackPointer)) and the reset "
                + "handler to \(Hex.address(resetHandler)); an \(family.chipName) needs the stack pointer inside its RAM "
                + "(\(Hex.address(ram.lowerBound))-\(Hex.address(ram.upperBound))) and the reset handler inside the code "
                + "(\(Hex.address(code.lowerBound))-\(Hex.address(code.upperBound))): the image was built for another chip",
            overridable: false)
    }
}

extension Firmware {
    /// The code a board would start from `image`, checked against the chip: with a SoftDevice, the
    /// application's vector table at the application start (where the SoftDevice starts it); without
    /// one, the table at address 0 (an image that owns the chip, such as MicroPython on a micro:bit
    /// V1) or else the one at the application start. Each must set the stack pointer in the chip's
    /// RAM and start code the image holds in the chip's flash. An image holding neither (a program
    /// region only) has no code to check.
    static func vectorTableProblems(_ image: MemoryImage, board: Board) -> [BoardProblem] {
        let layout = board.family.layout
        let ram = board.family.ram
        func holdsCode(_ table: VectorTable, in area: Range<UInt32>) -> Bool {
            let entry = table.resetHandler & ~1
            return table.fits(ram: ram, code: area) && image.hasData(in: entry..<(entry &+ 2))
        }
        let application = VectorTable(in: image, at: layout.applicationStart)
        if SoftDeviceInfo(in: image) == nil, let own = VectorTable(in: image, at: 0),
            holdsCode(own, in: layout.flash)
        {
            return []
        }
        // Nothing at the application start: bitflash writes nothing below it, so there is no code to
        // check. An application alone (a Nordic package's binary, a hex of the application region)
        // is checked only as an MCUboot image is: a MicroPython V1 hex and the package made of it agree.
        guard let application, image.hasData(in: 0..<layout.applicationStart),
            !holdsCode(application, in: layout.application)
        else { return [] }
        return [application.problem(board: board, code: layout.application, where: "the application start")]
    }
}

extension MCUbootImage {
    /// The application's vector table where the board's MCUboot starts it: the primary slot's
    /// start plus the header, running in place. Its reset handler must lie in the application.
    func vectorTableProblems(board: Board) -> [BoardProblem] {
        guard !header.flags.contains(.ramLoad) else { return [] }
        let slot = board.family.layout.mcubootPrimarySlot
        let start = UInt64(slot.lowerBound) + UInt64(header.headerSize)
        let end = min(start + UInt64(header.imageSize), UInt64(UInt32.max))
        guard start < end else { return [] }
        let code = UInt32(start)..<UInt32(end)
        guard let table = VectorTable(code: body, at: code.lowerBound) else {
            return [
                BoardProblem(
                    .vectorTable,
                    "the MCUboot image's application is \(header.imageSize) bytes, too short for a vector table: "
                        + "a \(board.displayName)'s MCUboot could not start it",
                    overridable: false)
            ]
        }
        guard !table.fits(ram: board.family.ram, code: code) else { return [] }
        return [table.problem(board: board, code: code, where: "the MCUboot image's application")]
    }
}
