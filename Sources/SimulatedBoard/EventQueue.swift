/// A deterministic priority queue of timed events.
///
/// Events are ordered by time, then by the order in which they were scheduled,
/// so two events at the same microsecond always come out in insertion order.
/// This is what makes the simulation reproducible.
public struct EventQueue<Payload: Sendable>: Sendable {
    /// One scheduled event.
    public struct Entry: Sendable {
        public let time: VirtualInstant
        /// Insertion sequence number: the tie-breaker for equal times.
        public let sequence: UInt64
        public let payload: Payload
    }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    public init() {}

    public var isEmpty: Bool { heap.isEmpty }
    public var count: Int { heap.count }

    /// The earliest event, without removing it.
    public var first: Entry? { heap.first }

    /// Schedules `payload` at `time`.
    public mutating func schedule(_ payload: Payload, at time: VirtualInstant) {
        heap.append(Entry(time: time, sequence: nextSequence, payload: payload))
        nextSequence += 1
        siftUp(heap.count - 1)
    }

    /// Removes and returns the earliest event.
    public mutating func pop() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
        return top
    }

    /// Keeps only the events for which `keep` is true (order is preserved).
    public mutating func filter(_ keep: (Payload) -> Bool) {
        let kept = heap.filter { keep($0.payload) }
        heap = []
        for e in kept.sorted(by: Self.before) {
            heap.append(e)
            siftUp(heap.count - 1)
        }
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }

    private mutating func siftUp(_ index: Int) {
        var i = index
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(heap[i], heap[parent]) else { return }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var i = index
        while true {
            let l = 2 * i + 1, r = l + 1
            var best = i
            if l < heap.count, Self.before(heap[l], heap[best]) { best = l }
            if r < heap.count, Self.before(heap[r], heap[best]) { best = r }
            if best == i { return }
            heap.swapAt(i, best)
            i = best
        }
    }
}
