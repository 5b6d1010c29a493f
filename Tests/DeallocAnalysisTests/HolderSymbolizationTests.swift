import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// `--symbolize` resolves the frames a holders record carries: its allocation stack and its
/// retain/release history's stacks, each distinct stack once.
@Suite struct HolderSymbolizationTests {
  /// Gives each frame a file and its ip as the line; counts its calls.
  struct CountingSymbolizer: FrameSymbolizer {
    var calls = 0
    var problems: [String] { [] }

    mutating func symbolize(_ frames: [Frame]) -> [Frame] {
      calls += 1
      return frames.map { frame in
        var frame = frame
        frame.file = "/src/App.swift"
        frame.line = Int(frame.ip)
        return frame
      }
    }
  }

  @Test func allocationStackAndHistoryFramesGetFileAndLine() {
    let shared = [Frame(ip: 7), Frame(ip: 8)]
    let report = HolderReport(
      direct: 1, more: 0, paths: [], allocationStack: [Frame(ip: 5)],
      retainHistory: RetainHistory(events: [
        RetainHistory.Event(.allocation, countAfter: 1, frames: [Frame(ip: 5)]),
        RetainHistory.Event(.retain, countAfter: 2, frames: shared),
        RetainHistory.Event(.retain, countAfter: 3, frames: shared),
      ]))
    var symbolizer: any FrameSymbolizer = CountingSymbolizer()
    let resolved = report.symbolized(with: &symbolizer)
    #expect(resolved.allocationStack.map(\.location) == ["/src/App.swift:5"])
    #expect(
      resolved.retainHistory?.events.flatMap(\.frames).map(\.line) == [5, 7, 8, 7, 8])
    #expect((symbolizer as? CountingSymbolizer)?.calls == 2, "one call per distinct stack")
  }
}
