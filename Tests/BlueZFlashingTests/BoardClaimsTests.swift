import Testing

@testable import BlueZFlashing

/// One board reached by two queries of a class (its name and its address) is flashed once: the
/// first query to connect claims the address, a later one is told which query has it and
/// whether that query still holds the link.
@Suite struct BoardClaimsTests {
    @Test func theFirstQueryClaimsTheAddressAndALaterOneIsToldWhoHasIt() {
        let claims = BoardClaims()
        #expect(claims.claim("F0:0D:00:00:00:01", by: "zotig") == nil)
        let later = claims.claim("F0:0D:00:00:00:01", by: "F0:0D:00:00:00:01")
        #expect(later?.query == "zotig")
        #expect(later?.holdsLink == true)
    }

    @Test func theClaimantAskingAgainKeepsItsClaim() {
        let claims = BoardClaims()
        #expect(claims.claim("F0:0D:00:00:00:01", by: "zotig") == nil)
        #expect(claims.claim("F0:0D:00:00:00:01", by: "zotig") == nil)
        #expect(claims.claim("F0:0D:00:00:00:01", by: "gatip")?.query == "zotig")
    }

    @Test func aClaimantThatClosedItsLinkStillHasTheBoardButNoLongerHoldsTheLink() {
        let claims = BoardClaims()
        #expect(claims.claim("F0:0D:00:00:00:01", by: "zotig") == nil)
        claims.released("F0:0D:00:00:00:01")
        let later = claims.claim("F0:0D:00:00:00:01", by: "F0:0D:00:00:00:01")
        #expect(later?.query == "zotig")
        #expect(later?.holdsLink == false)
    }

    @Test func differentBoardsAreClaimedApart() {
        let claims = BoardClaims()
        #expect(claims.claim("F0:0D:00:00:00:01", by: "zotig") == nil)
        #expect(claims.claim("F0:0D:00:00:00:02", by: "gatip") == nil)
        claims.released("F0:0D:00:00:00:02")
        #expect(claims.claim("F0:0D:00:00:00:01", by: "gatip")?.holdsLink == true)
    }
}
