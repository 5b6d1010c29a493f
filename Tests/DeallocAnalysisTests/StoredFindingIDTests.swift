import DeallocLog
import Testing

@testable import DeallocAnalysis

/// A finding's id is worked out when the finding is made and kept in step with its kind and
/// signature: it is always the id of what the finding says.
@Suite struct StoredFindingIDTests {
  private static func id(of finding: Finding) -> FindingID {
    FindingID(
      kind: finding.kind, type: finding.signature.type,
      symbols: finding.signature.frames.map(FindingID.stableName))
  }

  @Test func theStoredIDFollowsTheKindAndTheSignature() {
    var finding = Finding(
      kind: .leaked,
      signature: Signature(type: "App.Node", frames: [Frame(ip: 16, symbol: "App.close()")]),
      stack: [], count: 1, examples: [], explanation: "")
    #expect(finding.id == Self.id(of: finding))
    let leaked = finding.id
    finding.kind = .stuck
    #expect(finding.id == Self.id(of: finding) && finding.id != leaked)
    // The holder path stays out of the id: holders on or off, one id.
    let unheld = finding.id
    finding.signature.holderKey = "App.Cache.items"
    #expect(finding.id == Self.id(of: finding) && finding.id == unheld)
    finding.signature.frames = [Frame(ip: 16, symbol: "App.open()")]
    #expect(finding.id == Self.id(of: finding) && finding.id != unheld)
  }
}
