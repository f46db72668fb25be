import FirmwareImage
import Foundation
import LinkModel
import McuMgr
import PartialFlashing
import SMP
import Testing
import Transport
@testable import SimulatedBoard

/// One write command lost anywhere in a flash: the flash still ends verified, with the new
/// program byte for byte. A write command has no answer at the ATT level, so a real host loses
/// one silently (BlueZ 5.66 `src/shared/att.c` `can_write_data` drops a command whose socket write
/// fails; fixed in 5.78). The sweep takes every write of a clean run in turn, or, in the quick
/// form kept in the suite, every write of a few blocks and SMP requests plus the protocol's own
/// requests (STATUS, REGION_INFO, the program hash block, END_OF_TRANSMISSION). Set
/// `BITFLASH_LOST_WRITE_SWEEP=all` for every index.
@Suite struct LostWriteSweepTests {
    static var everyIndex: Bool { ProcessInfo.processInfo.environment["BITFLASH_LOST_WRITE_SWEEP"] == "all" }

    // MARK: Partial flashing

    static let family = ChipFamily.nrf52833
    static let old = Fixture.image(family: family, magicAt: 0x47000, programLength: 6000, seed: 3)
    static let new = Fixture.image(
        family: family, magicAt: 0x47000, programLength: 2500, seed: 5,
        programHash: [0xC1, 0x00, 0x81, 0x00, 0xAB, 0x00, 0xDD, 0x00])

    struct PartialRun {
        var error: String?
        var stats: PartialFlashStats?
        var writes: [String]
        var board: SimulatedBoard
    }

    /// A board as the real-stack test's VM makes it under load: a 50 ms connection interval and
    /// every page erase 30 times the datasheet's 85 ms (2.55 s), longer than the block timeout.
    static let busyLink = LinkProfile(name: "busy", connectionIntervalMicroseconds: 50_000)

    static func partialFlash(dropping index: Int?, busy: Bool = false) throws -> PartialRun {
        let program = try #require(MakeCodeProgram.find(in: new, family: family))
        var faults = FaultPlan(seed: 1)
        if let index { faults.dropWriteAt = [index] }
        if busy {
            faults.slowErase = 1
            faults.slowEraseFactor = 30
        }
        var sim = Simulation(link: busy ? busyLink : .deviceRequested, faults: faults)
        let id = sim.addBoard(
            try SimulatedBoard(.microbitV2, image: old, mode: .application, bluetoothInApplicationMode: true))
        let run = sim.run(
            PartialFlashFlow(image: new, program: program, family: family), on: id, deadline: .seconds(300))
        var error: String?
        var stats: PartialFlashStats?
        switch run.outcome {
        case let .success(.flashed(s)): stats = s
        case let .success(other): error = "\(other)"
        case let .failure(e): error = "\(e)"
        }
        let writes = run.trace.entries.filter { $0.kind == .write }.map(\.text)
        return PartialRun(error: error, stats: stats, writes: writes, board: try sim.board(id))
    }

    /// The write indices the sweep covers: every one, or the writes that are not FLASH_DATA
    /// plus all 4 packets of the first, second, a middle, the last and the hash block.
    static func partialIndices(_ writes: [String]) -> [Int] {
        if everyIndex { return Array(writes.indices) }
        let flashData = writes.indices.filter { writes[$0].hasPrefix("command 01") && writes[$0].count == 48 }
        let blocks = flashData.count / 4
        var picked = Set(writes.indices.filter { !flashData.contains($0) })
        for b in Set([0, 1, blocks / 2, blocks - 2, blocks - 1]) where b >= 0 {
            picked.formUnion(flashData[(4 * b)..<(4 * b + 4)])
        }
        return picked.sorted()
    }

    @Test(arguments: [false, true])
    func aPartialFlashRecoversFromOneLostWriteAtAnyPosition(busy: Bool) throws {
        let clean = try Self.partialFlash(dropping: nil, busy: busy)
        let cleanStats = try #require(clean.stats, "clean run: \(clean.error ?? "?")")
        // On the busy board every page opener's answer comes after the block timeout.
        #expect(cleanStats.verified && (busy ? cleanStats.retries > 0 : cleanStats.retries == 0))
        #expect(cleanStats.resyncs == 0, "slow erases need no barrier: \(cleanStats)")
        let program = try #require(MakeCodeProgram.find(in: Self.new, family: Self.family))
        let expected = Self.new.read(program.region, fill: 0xFF)
        var failures: [String] = []
        let indices = Self.partialIndices(clean.writes)
        for i in indices {
            let run = try Self.partialFlash(dropping: i, busy: busy)
            let what = "write \(i) (\(clean.writes[i].prefix(14)))"
            guard let stats = run.stats else {
                failures.append("\(what): \(run.error ?? "?")")
                continue
            }
            if !stats.verified { failures.append("\(what): not verified") }
            if try run.board.readFlash(program.region) != expected { failures.append("\(what): program differs") }
        }
        print(
            "partial flashing\(busy ? " on a busy board" : ""), \(clean.writes.count) writes, \(indices.count) swept, "
                + "\(failures.count) failed")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

/// The same sweep for McuMgr: one write of any SMP request lost, each fragment of a request cut
/// across writes (Zephyr's SMP reassembly, `smp_reassembly.c`) and each one-write request.
extension LostWriteSweepTests {
    struct McuMgrRun {
        var error: String?
        var writes: [[UInt8]]
        var board: SimulatedBoard
        var new: SimulatedMCUbootImage
        var result: McuMgrResult?
    }

    static func mcuMgrUpgrade(dropping index: Int?) throws -> McuMgrRun {
        let (old, new) = try SMPFixture.images(magicAt: 0x40000, programLength: 0x2000)
        var faults = FaultPlan(seed: 1)
        if let index { faults.dropWriteAt = [index] }
        var sim = Simulation(link: .deviceRequested, faults: faults)
        let id = sim.addBoard(try SimulatedBoard.mcuMgrBoard(.microbitV2, primary: old.bytes))
        var options = McuMgrUpgradeOptions()
        options.traceBytes = 0
        let run = sim.run(
            McuMgrUpgrade(image: SMPFixture.upgrade(new), options: options), on: id, deadline: .seconds(900))
        let writes = run.trace.entries.filter { $0.kind == .write }.map {
            bytes(hex: String($0.text.split(separator: " ").last ?? ""))
        }
        var error: String?
        var result: McuMgrResult?
        switch run.outcome {
        case let .success(r): result = r
        case let .failure(e): error = "\(e)"
        }
        return McuMgrRun(error: error, writes: writes, board: try sim.board(id), new: new, result: result)
    }

    /// The writes of each SMP request, in order: a request's first write holds its header, whose
    /// length says how many bytes follow in later writes.
    static func requests(_ writes: [[UInt8]]) -> [[Int]] {
        var requests: [[Int]] = []
        var remaining = 0
        for (i, w) in writes.enumerated() {
            if remaining > 0, !requests.isEmpty {
                requests[requests.count - 1].append(i)
                remaining -= w.count
                continue
            }
            guard w.count >= 8 else { continue }
            requests.append([i])
            remaining = 8 + (Int(w[2]) << 8 | Int(w[3])) - w.count
        }
        return requests
    }

    @Test func aMcuMgrUpgradeRecoversFromOneLostWriteAtAnyPosition() throws {
        let clean = try Self.mcuMgrUpgrade(dropping: nil)
        #expect(clean.error == nil, "clean run: \(clean.error ?? "")")
        let requests = Self.requests(clean.writes)
        let cut = requests.filter { $0.count > 1 }
        #expect(cut.count > 2, "upload frames are cut across writes")
        var indices = Set<Int>()
        if Self.everyIndex {
            indices = Set(clean.writes.indices)
        } else {
            // Every write of the first, second, a middle and the last two requests cut across writes,
            // and the first write of every other request.
            for r in Set([0, 1, cut.count / 2, cut.count - 2, cut.count - 1]) { indices.formUnion(cut[r]) }
            indices.formUnion(requests.filter { $0.count == 1 }.map { $0[0] })
        }
        var failures: [String] = []
        for i in indices.sorted() {
            let run = try Self.mcuMgrUpgrade(dropping: i)
            let what = "write \(i) of \(clean.writes.count)"
            guard let result = run.result else {
                failures.append("\(what): \(run.error ?? "?")")
                continue
            }
            let slot = try #require(run.board.smpServer).configuration.primarySlot
            let held = try run.board.readFlash(slot.lowerBound..<(slot.lowerBound + UInt32(run.new.bytes.count)))
            if held != run.new.bytes { failures.append("\(what): the primary slot differs") }
            if result.finalSlots.first(where: { $0.slot == 0 })?.hash != run.new.hash {
                failures.append("\(what): the board does not report the new image")
            }
        }
        print(
            "McuMgr, \(clean.writes.count) writes in \(requests.count) requests, \(indices.count) swept, \(failures.count) failed"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

/// The bytes of a hex string as the trace writes them ("0102AB").
private func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
        UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16)
    }
}
