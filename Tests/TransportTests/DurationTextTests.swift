import Testing
import Transport

@Suite struct DurationTextTests {
    @Test(arguments: [
        (Duration.milliseconds(250), "250 ms"), (.zero, "0 ms"), (.milliseconds(999), "999 ms"),
        (.seconds(1), "1 s"), (.microseconds(1_760_446), "1.8 s"), (.milliseconds(2_049), "2 s"),
        (.milliseconds(12_460), "12.5 s"), (.seconds(90), "90 s")
    ])
    func aDurationReadsInMillisecondsOrSecondsToOneDecimal(_ d: Duration, _ text: String) {
        #expect(d.readableText == text)
    }
}
