import FirmwareImage
import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

let family = ChipFamily.nrf52833
let applications = NordicFixture.sizes.map { NordicFixture.application(count: $0, family: family) }
let initPackets = applications.map { MicrobitAppInitPacket(application: $0.bytes).bytes }
let knownTimers = [
    TimerID("response"), TimerID("receipt"), TimerID("flash-wait"), TimerID("reset"), TimerID("stranger")
]

/// libFuzzer entry point: the input is a script of link events for `NordicDFUFlow` on a
/// Secure DFU board (micro:bit V2).
///
/// Three setup bytes pick the options (`NordicFixture.options`), the application size, the
/// MTU and where the board starts (application, bootloader, no DFU service). Then each step
/// takes one byte; its low 3 bits pick the event: a notification of arbitrary bytes (on the
/// control point or the buttonless characteristic), the answer a board could give (to the
/// last request, or a packet receipt) bent by the next byte (wrong CRC, wrong offset, an
/// error result, a claim of everything, a small or odd object size, another opcode's
/// answer, the answer twice), a timer, a disconnect, connected (bootloader, application, no
/// service, the legacy bootloader), connect failed, a write failure, or time passing.
///
/// Checked after every step (see `SecureCheck`): every control-point write is a well-formed
/// request; every packet write is the init command or the image, at the position the flow
/// reached or one the board announced, and inside one object; Create asks for the right
/// size; Execute follows only a CRC answer that matches the bytes up to there; success
/// only after the board confirmed the CRC of the whole init command and the whole image,
/// with the result's figures matching what was written; no write on a dropped link; the
/// bytes written stay within what the retry bound allows; failed connects stay within
/// their bound, and so do unanswered requests; `finish` once and last; after the script, a driver that only fires timers
/// and fails reconnections ends the flow within 2,000 events.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecureDFUFlow(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var source = ByteSource(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    let options = NordicFixture.options(source.byte(), source.byte())
    let setup = source.byte()
    let which = Int(setup & 3)
    let mtu = NordicFixture.mtus[Int(setup >> 2 & 3)]
    let bootloader = NordicFixture.secureBootloader(mtu: mtu)
    let start = [NordicFixture.secureApplication, bootloader, bootloader, NordicFixture.nothing][Int(setup >> 4 & 3)]
    var flow = NordicDFUFlow(image: applications[which].image, family: family, options: options)
    var check = SecureCheck(image: applications[which].bytes, initPacket: initPackets[which], options: options)
    var link = NordicLinkCheck(options: options, connectFailureLimit: options.reconnectAttempts)
    var book = DriverBook()

    func feed(_ event: FlowEvent, stale: Bool = false) {
        link.deliver(event, stale: stale)
        check.deliver(event)
        let actions = flow.handle(event, now: book.now)
        book.record(actions)
        check.observe(actions, after: event)
        link.check(actions, after: event, finished: book.finished)
    }
    feed(.start(start))

    var steps = 0
    while !source.isAtEnd, !book.finished, steps < 4096 {
        steps += 1
        let op = source.byte()
        switch op & 7 {
        case 0:
            let ch = op & 0x80 == 0 ? NordicGATT.secureControlPoint : NordicGATT.buttonlessBonded
            feed(.notification(ch, source.bytes(upTo: 20)))
        case 1:
            for answer in check.answer(variant: source.byte()) where !book.finished { feed(answer) }
        case 2:
            let selector = source.byte()
            let running = selector & 0x80 == 0 && !book.timers.isEmpty
            feed(.timerFired(book.takeTimer(selector, known: knownTimers)), stale: !running)
        case 3:
            book.tookDisconnect()
            feed(.disconnected(op & 0x08 == 0 ? .remoteTerminated : .supervisionTimeout))
        case 4:
            book.tookConnect()
            feed(
                .connected(
                    [
                        bootloader, NordicFixture.secureApplication, NordicFixture.nothing,
                        NordicFixture.legacyBootloader(mtu: 23)
                    ][Int(op >> 3 & 3)]))
        case 5:
            book.tookConnect()
            feed(.connectFailed(.connectFailed("fuzz")))
        case 6:
            let ch = [
                NordicGATT.secureControlPoint, NordicGATT.securePacket, NordicGATT.buttonlessBonded,
                NordicGATT.buttonlessUnbonded
            ][Int(op >> 3 & 3)]
            feed(.writeFailed(ch, op & 0x20 == 0 ? .notConnected(operation: "write") : .characteristicNotFound(ch)))
        default:
            book.advance(source.byte())
        }
    }

    var drained = 0
    while !book.finished {
        guard let event = book.drainEvent() else {
            fatalError("the flow waits forever: no timer running, no link request, not finished")
        }
        drained += 1
        require(drained <= 2000, "the flow did not finish within 2000 timer firings / failed connects")
        feed(event)
    }
    check.finished(flow.outcome, link: link)
    return 0
}
