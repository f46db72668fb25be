import PartialFlashingFrames
import Testing
import Transport
@testable import PartialFlashing

/// A partial-flashing error says what went wrong and, apart, what to do: a full update that
/// made good a failed partial flash reports the problem without advice for a failed run.
@Suite struct ErrorWordingTests {
    static let errors: [PartialFlashError] = [
        .serviceMissing, .noAnswer(request: "STATUS", attempts: 3, timeout: .seconds(1)),
        .unexpectedRegion(requested: 1, got: 2), .staysInApplicationMode(switches: 2),
        .rebootNotObserved(after: "FF 00", waited: .seconds(5)),
        .reconnectFailed(attempts: 3, lastError: .connectFailed("no answer")),
        .tooManyLinkLosses(count: 4, last: .supervisionTimeout), .programNotPageAligned(start: 0x47010, pageSize: 4096),
        .nothingToWrite,
        .gaveUp(block: 14, address: 0x48340, retries: 6, budget: .block(limit: 6), lastProblem: .outOfOrder),
        .unaccountedAnswers(count: 1), .staysInPairingMode(rewrites: 2)
    ]

    @Test(arguments: errors)
    func theDescriptionIsTheProblemThenTheAdvice(_ error: PartialFlashError) {
        #expect(error.description == "\(error.problem); \(error.advice)")
        #expect(!error.problem.hasSuffix(";") && !error.advice.isEmpty)
        #expect(!error.problem.contains("try again"), "\(error.problem)")
    }

    @Test func tooManyLinkLossesKeepsItsAdviceApart() {
        let error = PartialFlashError.tooManyLinkLosses(count: 4, last: .supervisionTimeout)
        #expect(error.problem == "the link dropped 4 times (last: \(DisconnectReason.supervisionTimeout))")
        #expect(error.advice == "move the board closer and try again")
    }
}
