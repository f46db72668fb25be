import FirmwareImage
import LinkModel
import Testing

/// The link's timing facts: air time on the 1M PHY, the named link profiles, the lower bounds.
@Suite struct LinkModelTests {
    @Test func airTimeFollowsTheOneMegabitPhy() {
        // A 20-byte write: 27 bytes of LL payload, 37 bytes on air = 296 µs.
        #expect(AirTime.packet(payload: AirTime.writePDU(value: 20)) == 296)
        #expect(AirTime.exchange(central: 27, peripheral: 0) == 296 + 150 + 80 + 150)
        #expect(AirTime.fragments(bytes: 27, dataLength: 27) == [27])
        #expect(AirTime.fragments(bytes: 254, dataLength: 27) == [27, 27, 27, 27, 27, 27, 27, 27, 27, 11])
        #expect(AirTime.fragments(bytes: 254, dataLength: 251) == [251, 3])
    }

    @Test func namedAndCustomProfiles() throws {
        #expect(try LinkProfile(named: "linux-default").connectionIntervalMicroseconds == 30_000)
        #expect(try LinkProfile(named: "device-requested").connectionIntervalMicroseconds == 15_000)
        #expect(try LinkProfile(named: "fast").connectionIntervalMicroseconds == 7_500)
        #expect(try LinkProfile(named: "11.25ms").connectionIntervalMicroseconds == 11_250)
        #expect(try LinkProfile(named: "ci=50").name == "custom-50ms")
        #expect(LinkProfile.fast.packetsPerEvent == 6 && LinkProfile.fast.supervisionTimeout == .seconds(4))
        #expect(throws: LinkModelError.badConnectionInterval(microseconds: 5_000)) { try LinkProfile(named: "5") }
        #expect(throws: LinkModelError.badConnectionInterval(microseconds: 8_000)) { try LinkProfile(named: "8ms") }
        #expect(throws: LinkModelError.unknownProfile("turbo")) { try LinkProfile(named: "turbo") }
        // BLE allows 4 s, but the board's 4 s supervision timeout must exceed twice the interval.
        #expect(try LinkProfile(named: "1998.75ms").connectionIntervalMicroseconds == 1_998_750)
        #expect(throws: LinkModelError.badConnectionInterval(microseconds: 2_000_000)) {
            try LinkProfile(named: "2000ms")
        }
        #expect(throws: LinkModelError.badConnectionInterval(microseconds: 4_000_000)) {
            try LinkProfile(named: "4000")
        }
    }

    @Test func partialLowerBoundCountsTwoEventsPerBlockAndErasesInWholeEvents() {
        let p = LinkProfile.linuxDefault
        let t = DeviceTiming.of(.nrf52833)
        let none = LowerBound.partial(blocks: 0, pagesOpened: 0, family: .nrf52833, profile: p)
        // Connection 1 s, STATUS + 2 REGION_INFO = 6 CI, EOT 1 CI + 16 words, reboot 300 ms.
        #expect(none == .seconds(1) + .milliseconds(7 * 30) + .microseconds(656) + .milliseconds(300))
        let plain = LowerBound.partial(
            blocks: 10, pagesOpened: 0, family: .nrf52833, profile: p, storesFlashIncomplete: false)
        #expect(plain - none == .milliseconds(10 * 60))
        // A page-opening block: 85.656 ms of work is over at the third event after its writes,
        // so the block costs 4 CI (2 CI + the erase rounded up to whole events).
        let opened = LowerBound.partial(
            blocks: 10, pagesOpened: 1, family: .nrf52833, profile: p, storesFlashIncomplete: false)
        #expect(opened - plain == .milliseconds(60))
        // The first block also stores `flashIncomplete` (a page erase and 64 words on CODAL):
        // 85.656 + 87.624 ms of work end in the sixth event after its writes: 7 CI instead of 4.
        let stored = LowerBound.partial(blocks: 10, pagesOpened: 1, family: .nrf52833, profile: p)
        #expect(stored - opened == .milliseconds(90))
        #expect(t.flashIncompleteStore(.nrf52833) == .milliseconds(85) + .microseconds(64 * 41))
        let v1 = LowerBound.partial(
            blocks: 1, pagesOpened: 1, family: .nrf51, profile: .fast, timing: nil, storesFlashIncomplete: false)
        let v1none = LowerBound.partial(blocks: 0, pagesOpened: 0, family: .nrf51, profile: .fast)
        // nRF51: 22.3 ms + 16 × 46.3 µs = 23.04 ms of work: 3 events, then the next block's: 5 CI.
        #expect(v1 - v1none == .microseconds(5 * 7_500))
        #expect(t.blockWrite == .microseconds(656))
    }
}
