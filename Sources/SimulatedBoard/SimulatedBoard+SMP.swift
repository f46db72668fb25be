import FirmwareImage
import LinkModel

extension SimulatedBoard {
    /// The board's McuMgr SMP server, if its profile offers one.
    public var smpServer: SMPServer? {
        services.lazy.compactMap { ($0 as? SMPServer) ?? (($0 as? HostileService)?.inner as? SMPServer) }.first
    }

    /// A board running Zephyr-style firmware with the McuMgr SMP server: always connectable,
    /// ATT MTU 247 and LL data length 251, partial flashing kept beside it.
    public static func mcuMgrProfile(_ board: Board) -> BoardProfile {
        BoardProfile(
            board: board, services: [.partialFlashing, .smp], bluetoothInApplicationMode: true,
            attMTU: 247, dataLength: 251)
    }

    /// A board with the McuMgr profile whose primary slot holds `image` (an MCUboot image,
    /// confirmed): its header in the page below the application start, its payload from there on.
    /// `configure` adjusts the server's figures (buffers, fault probabilities) before use.
    public static func mcuMgrBoard(
        _ board: Board, primary image: [UInt8],
        configure: (inout SMPServerConfiguration) -> Void = { _ in }
    ) throws -> SimulatedBoard {
        let profile = mcuMgrProfile(board)
        var configuration = SMPServerConfiguration.standard(for: profile.layout, attMTU: profile.attMTU)
        configure(&configuration)
        var memory = MemoryImage()
        try memory.write(image, at: configuration.primarySlotStart)
        var made = try SimulatedBoard(profile: profile, image: memory)
        if let i = made.services.firstIndex(where: { $0 is SMPServer }) {
            made.services[i] = SMPServer(configuration: configuration)
        }
        return made
    }
}

extension SMPServerConfiguration {
    /// The full-DFU lower bound (`LowerBound.fullDFU`) for uploading `imageBytes` to this
    /// server over `profile`, with upload frames of `frameOverhead` bytes besides their data,
    /// swapping `swapPages` pages at the reset.
    public func lowerBound(
        imageBytes: Int, frameOverhead: Int, swapPages: Int, profile: LinkProfile,
        timing: DeviceTiming
    ) -> Duration {
        LowerBound.fullDFU(
            imageBytes: imageBytes, frameSize: bufferSize, frameOverhead: frameOverhead,
            attMTU: min(profile.attMTU, notificationSize + 3), dataLength: profile.dataLength,
            pageSize: Int(pageSize),
            swap: swapDuration(pages: swapPages, pageErase: timing.pageErase, wordWrite: timing.wordWrite),
            resetDelay: resetDelay, profile: profile, timing: timing)
    }
}
