import Testing
@testable import BlueZFlashing

/// The waves real boards are flashed in: at most the limit per adapter, the next board on the
/// adapter that frees up, and the back-off after a controller refuses.
@Suite struct AdapterSlotsTests {
    @Test func boardsGoToTheAdapterWithMostRoomAndWaitBeyondTheLimits() async {
        let slots = AdapterSlots(["hci0", "hci1"], limit: 2)
        var taken: [Int] = []
        for _ in 0..<4 { taken.append(await slots.take()) }
        #expect(taken == [0, 1, 0, 1])
        let waiter = Task { await slots.take() }
        // The board waits before a connection frees up (no time passes: the loop only yields).
        while await slots.waiting == 0 { await Task.yield() }
        await slots.give(1)
        #expect(await waiter.value == 1, "the waiting board starts on the adapter that freed up")
    }

    @Test func aRefusalWithOtherBoardsConnectedLowersTheLimitAndFreesTheSlot() async {
        let slots = AdapterSlots([nil], limit: 5)
        for _ in 0..<3 { _ = await slots.take() }
        #expect(await slots.backOff(0, lowersLimit: true))
        #expect(await slots.limit(0) == 2)
        let alone = AdapterSlots([nil], limit: 5)
        _ = await alone.take()
        #expect(
            await alone.backOff(0, lowersLimit: true) == false,
            "alone on its adapter, a refusal is the board's own failure")
        #expect(await alone.limit(0) == 5)
    }

    @Test func anAttemptGivenUpWaitsForAFreeConnectionWithoutLoweringTheLimit() async {
        let slots = AdapterSlots([nil], limit: 5)
        for _ in 0..<3 { _ = await slots.take() }
        // le-connection-abort-by-local is also what a board that stopped advertising gives.
        #expect(await slots.backOff(0, lowersLimit: false))
        #expect(await slots.limit(0) == 5)
        #expect(await slots.take() == 0, "the slot it gave back is free again")
    }

    @Test func anAdapterNamedTwiceIsOneAdapter() async throws {
        let names = try await AdapterSlots.resolve(["hci0", "hci1", "hci0"], settings: BlueZFlashSettings())
        #expect(names == ["hci0", "hci1"])
    }

    @Test func theOutOfConnectionsSymptomsAreRecognised() {
        struct E: Error, CustomStringConvertible { let description: String }
        #expect(AdapterSlots.isOutOfConnections(E(description: "connecting: Failed: le-connection-refused")))
        #expect(AdapterSlots.isOutOfConnections(E(description: "Failed: le-connection-abort-by-local")))
        #expect(!AdapterSlots.isOutOfConnections(E(description: "the board did not advertise within 10 s")))
        #expect(AdapterSlots.isRefusedForWantOfConnections("Failed: le-connection-refused"))
        #expect(!AdapterSlots.isRefusedForWantOfConnections("Failed: le-connection-abort-by-local"))
    }
}
