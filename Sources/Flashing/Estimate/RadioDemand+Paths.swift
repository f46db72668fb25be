import LinkModel
import NordicDFUFrames

extension PartialEstimator {
    /// Partial flashing's parts with their air time. Each block is one event of 4 FLASH_DATA
    /// write commands (20 bytes each) and one event of the board's `01 FF` (2 bytes); the page
    /// erases are a part of their own, with no air time: the board erases while the radio
    /// serves other connections. The memory-map reads are STATUS and two REGION_INFO round
    /// trips; the mode switch is `FF 00`; END_OF_TRANSMISSION is one write. Its connections: the
    /// first (in application mode when it restarts the board in pairing mode, else in pairing
    /// mode), the one after that restart, after the reboot (pairing mode), and the read-back's
    /// (the new program, in application mode).
    public func radioDemand(_ context: EstimateContext) -> RadioDemand {
        let estimate = estimate(context)
        let dl = context.link.profile.dataLength
        let ci = max(context.link.profile.connectionIntervalMicroseconds, 1)
        let t = context.board.timing
        let plainWork = t.blockWrite.wholeMicroseconds
        let openingWork = plainWork + t.pageErase.wholeMicroseconds
        func blockCost(_ work: Int64) -> Int64 { (work / ci + 2) * ci }
        let blockAir = 4 * ExchangeAir.write(20, dataLength: dl) + ExchangeAir.answer(2, dataLength: dl)
        let mapRead = ExchangeAir.memoryMapRead(dataLength: dl)
        var parts: [RadioDemand.Part] = []
        for part in RadioDemand(estimate, air: { _ in nil }).parts {
            switch part.name {
            case "blocks":
                parts.append(
                    .init(
                        name: "blocks", duration: .microseconds(Int64(blocks) * blockCost(plainWork)),
                        air: .microseconds(Int64(blocks) * blockAir)))
                parts.append(
                    .init(
                        name: "page erases",
                        duration: .microseconds(Int64(pagesOpened) * (blockCost(openingWork) - blockCost(plainWork))),
                        air: .zero))
            case "end of transmission and reboot":
                parts.append(
                    .init(
                        name: part.name, duration: part.duration,
                        air: .microseconds(ExchangeAir.write(1, dataLength: dl)), idle: t.reboot))
            case "restart in pairing mode and read the memory map again":
                parts.append(
                    .init(
                        name: part.name, duration: part.duration,
                        air: .microseconds(ExchangeAir.write(2, dataLength: dl) + mapRead)))
            default:
                // The memory-map read before the decision and the read-back after the reboot.
                let reads = part.name == context.beforeDecision.name && !context.includesMemoryMapRead ? 0 : mapRead
                parts.append(.init(name: part.name, duration: part.duration, air: .microseconds(reads)))
            }
        }
        var demand = RadioDemand(
            path: .partial, parts: parts, connectionInterval: context.link.profile.connectionInterval)
        let setup = context.link.profile.connectionSetup
        if context.includesMemoryMapRead {
            demand.connects(
                context.beforeDecision.name, as: switchesToPairingMode ? .application : .pairing, after: .zero,
                setup: setup)
        }
        // The restart's connection is followed by the memory-map read: STATUS and two REGION_INFO.
        let restart = parts.first { $0.name == Self.pairingModeRestart }
        if let restart {
            demand.connects(
                Self.pairingModeRestart, as: .pairing,
                after: max(restart.duration - setup - .microseconds(3 * 2 * ci), .zero), setup: setup)
        }
        demand.connects(Self.readBackPart, as: .application, after: .zero, setup: setup)
        return demand
    }
}

extension McuMgrEstimator {
    /// A full update over McuMgr with its air time: the upload's writes and answers (stepped in
    /// `uploadSchedule`), SMP round trips of small requests with answers of up to about 100
    /// bytes (image state), and the memory-map reads before and after. Its connections: the
    /// first (as `first` advertises), and the new image's after the reset (application mode).
    public func radioDemand(_ context: EstimateContext, first: Advertising = .application) -> RadioDemand {
        let dl = context.link.profile.dataLength
        let upload = uploadSchedule(profile: context.link.profile, board: context.board)
        let smp = ExchangeAir.roundTrip(request: 20, answer: 100, dataLength: dl)
        let mapRead = ExchangeAir.memoryMapRead(dataLength: dl)
        var demand = RadioDemand(estimate(context)) { name in
            switch name {
            case "connect and read the memory map", "read back the program": return mapRead
            case "parameters and state read", "test and reset": return 2 * smp
            case "upload": return upload.air.wholeMicroseconds
            case "confirm and verify": return Int64(roundTripsAfterUpload - 2) * smp
            default: return nil
            }
        }
        demand.connectionInterval = context.link.profile.connectionInterval
        let setup = context.link.profile.connectionSetup
        if context.includesMemoryMapRead {
            demand.connects(context.beforeDecision.name, as: first, after: .zero, setup: setup)
        }
        demand.connects(Self.reconnectPart, as: .application, after: .zero, setup: setup)
        return demand
    }
}

extension NordicDFUEstimator {
    /// A full update through the Nordic bootloader with its air time: the data packets (244
    /// bytes for Secure DFU, 20 for legacy) and a receipt (11 bytes) per `PRN` packets; per
    /// Secure object a Create, a checksum and an Execute round trip; the init command's round
    /// trips; the memory-map reads. Its connections: the first (as `first` advertises), the
    /// bootloader's at the end of the entry, and the new program's (application mode) for the
    /// read-back (Secure DFU) or at the end of the activation (legacy DFU).
    public func radioDemand(_ context: EstimateContext, first: Advertising = .application) -> RadioDemand {
        let estimate = estimate(context)
        let (mtu, dataLength) = bootloaderLink(context.link)
        let dl = context.link.profile.dataLength
        let secure = dfuProtocol == .secure
        let packetSize = secure ? max(20, min(244, (mtu - 3) & ~3)) : max(4, min(20, (mtu - 3) & ~3))
        let packets = Self.writes(applicationBytes, size: packetSize)
        let prn = Int(secure ? options.securePacketReceipts : options.legacyPacketReceipts)
        let receipts = prn > 0 ? (packets.count + prn - 1) / prn : 1
        let data =
            packets.reduce(0) { $0 + ExchangeAir.write($1, dataLength: dataLength) }
            + Int64(receipts) * ExchangeAir.answer(11, dataLength: dataLength)
        let command = ExchangeAir.roundTrip(request: 9, answer: 15, dataLength: dataLength)
        let objects = Int64((applicationBytes + objectSize - 1) / max(objectSize, 1))
        let mapRead = ExchangeAir.memoryMapRead(dataLength: dl)
        var demand = RadioDemand(estimate) { name in
            // Secure DFU's packets part holds each object's checksum and Execute.
            if name.hasPrefix("packets") { return data + (secure ? objects * 2 * command : 0) }
            if name.hasPrefix("data objects") { return secure ? objects * command : nil }
            if name.hasPrefix("init packet") {
                return 7 * command + ExchangeAir.write(MicrobitAppInitPacket.size, dataLength: dataLength)
            }
            if name.hasPrefix("enter") { return ExchangeAir.roundTrip(request: 1, answer: 3, dataLength: dl) }
            if name == "connect and read the memory map" || name == "read back the program" { return mapRead }
            return nil
        }
        demand.connectionInterval = context.link.profile.connectionInterval
        // Each Create is a write and its answer, one event each; between them the board erases
        // the object's pages with its radio silent. Object by object the Creates and erases
        // alternate with the packets, the boards beside it in step (`RadioDemand.alternate`).
        if secure, let i = demand.parts.firstIndex(where: { $0.name.hasPrefix("data objects") }) {
            demand.alternate(i, count: Int(objects))
        }
        let setup = context.link.profile.connectionSetup
        if context.includesMemoryMapRead {
            demand.connects(context.beforeDecision.name, as: first, after: .zero, setup: setup)
        }
        for part in estimate.parts.map(\.name) where part.hasPrefix("enter the bootloader") {
            demand.connects(part, as: .bootloader, setup: setup)
        }
        if secure {
            demand.connects(Self.readBackPart, as: .application, after: .zero, setup: setup)
        } else {
            demand.connects(Self.legacyActivatePart, as: .application, setup: setup)
        }
        return demand
    }
}
