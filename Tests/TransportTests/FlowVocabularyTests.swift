import Foundation
import Testing
import Transport

/// Two flows' checkpoints, as a flow module would declare them.
private struct PageMark: FlowCheckpoint { var page: Int }
private struct OffsetMark: FlowCheckpoint { var offset: Int }

/// A flow module's own phase, as PartialFlashing and McuMgr add theirs.
extension FlowPhase {
    fileprivate static let calibrating = FlowPhase(rawValue: "calibrating")
}

/// The open parts of the flow vocabulary: phases any flow module adds, checkpoints of any flow
/// type, carried through the base layer without it naming them.
@Suite struct FlowVocabularyTests {
    @Test("a phase is written in JSON as its words alone, the shared ones and a module's own alike")
    func phasesEncodeAsTheirWords() throws {
        let phases: [FlowPhase] = [.connecting, .upload, .reset, .verify, .done, .calibrating]
        let text = String(decoding: try JSONEncoder().encode(phases), as: UTF8.self)
        #expect(text == #"["connecting","full upload","reset","verify","done","calibrating"]"#)
        #expect(try JSONDecoder().decode([FlowPhase].self, from: Data(text.utf8)) == phases)
    }

    @Test("a module's phase equals the phase of the same words and no other")
    func phasesCompareByTheirWords() {
        #expect(FlowPhase(rawValue: "calibrating") == .calibrating)
        #expect(FlowPhase.calibrating != .verify)
        #expect(FlowReport.phase(.calibrating) != .phase(.verify))
    }

    @Test("a checkpoint comes back as its own type only, and compares by value")
    func checkpointsKeepTheirType() {
        let mark = AnyFlowCheckpoint(PageMark(page: 3))
        #expect(mark.value(as: PageMark.self) == PageMark(page: 3))
        #expect(mark.value(as: OffsetMark.self) == nil)
        #expect(mark == AnyFlowCheckpoint(PageMark(page: 3)))
        #expect(mark != AnyFlowCheckpoint(PageMark(page: 4)))
        #expect(AnyFlowCheckpoint(OffsetMark(offset: 3)) != mark)
    }

    @Test("a flow reports its own checkpoint value, or nil for nothing left to continue")
    func checkpointReportsCarryTheValue() {
        let reported: FlowReport = .checkpoint(PageMark(page: 7))
        #expect(reported == .checkpoint(AnyFlowCheckpoint(PageMark(page: 7))))
        #expect(reported != .checkpoint(nil))
        guard case let .checkpoint(carried?) = reported else {
            Issue.record("not a checkpoint: \(reported)")
            return
        }
        #expect(carried.value(as: PageMark.self)?.page == 7)
    }
}
