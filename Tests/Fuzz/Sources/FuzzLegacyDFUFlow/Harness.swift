import FirmwareImage
import NordicDFU
import NordicDFUFrames
import Transport
import FuzzEvents

let family = ChipFamily.nrf51
let applications = NordicFixture.sizes.map { NordicFixture.application(count: $0, family: family) }
let knownTimers = [TimerID("response"), TimerID("receipt"), TimerID("reset"), TimerID("stranger")]

/// libFuzzer entry point: the input is a script of link events for `NordicDFUFlow` on a
/// legacy DFU board (micro:bit V1).
///
/// Three setup bytes pick the options (`NordicFixture.options`), the application size, the
/// MTU and where the board starts (application, bootloader, no DFU service). Then each step
/// takes one byte; its low 3 bits pick the event: a notification of arbitrary bytes, the
/// answer a board could give (to the last request, a packet receipt, the end of the
/// transfer; a reset after the entry, Activate or Reset) bent by the next byte (an error
/// status, a wrong receipt count, an image-size report, another opcode's answer, an early
/// end of transfer, the answer twice), a timer, a disconnect, connected (bootloader,
/// application, no service, the secure bootloader), connect failed, a write failure (not
/// connected, no such characteristic, an encryption failure), or time passing.
///
/// Checked after every step (see `LegacyCheck`): every control-point write is a request
/// the flow may send, in its order (Start, image sizes, init packet, Receive firmware);
/// the sizes and init packet are the application's; firmware packets carry the image from
/// byte 0 on, contiguously, at most 20 bytes each; Validate only once the whole image was
/// written and the board reported the transfer complete; Activate only after the board
/// validated it; success only after that, with the result's figures matching what was
/// written; no write on a dropped link; bytes written within the retry bound; failed
/// connects and unanswered requests within their bounds; `finish` once and last; no livelock (as in the other flow targets).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLegacyDFUFlow(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var source = ByteSource(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    let options = NordicFixture.options(source.byte(), source.byte())
    let setup = source.byte()
    let which = Int(setup & 3)
    let bootloader = NordicFixture.legacyBootloader(mtu: NordicFixture.mtus[Int(setup >> 2 & 3)])
    let start = [NordicFixture.legacyApplication, bootloader, bootloader, NordicFixture.nothing][Int(setup >> 4 & 3)]
    var flow = NordicDFUFlow(image: applications[which].image, family: family, options: options)
    var check = LegacyCheck(image: applications[which].bytes, options: options)
    var link = NordicLinkCheck(options: options, connectFailureLimit: 2 * options.reconnectAttempts)
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
        case 0: feed(.notification(NordicGATT.legacyControlPoint, source.bytes(upTo: 12)))
        case 1:
            for answer in check.answer(variant: source.byte()) where !book.finished {
                if case .disconnected = answer { book.tookDisconnect() }
                feed(answer)
            }
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
                        bootloader, NordicFixture.legacyApplication, NordicFixture.nothing,
                        NordicFixture.secureBootloader(mtu: 247)
                    ][Int(op >> 3 & 3)]))
        case 5:
            book.tookConnect()
            feed(.connectFailed(.connectFailed("fuzz")))
        case 6:
            let ch = [NordicGATT.legacyControlPoint, NordicGATT.legacyPacket, NordicGATT.dfuControl][
                Int(op >> 3 & 3) % 3]
            let errors: [TransportError] = [
                .notConnected(operation: "write"), .characteristicNotFound(ch),
                .failed(operation: "write", message: "Insufficient Authentication"),
                .failed(operation: "write", message: "busy")
            ]
            feed(.writeFailed(ch, errors[Int(op >> 5 & 3)]))
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
