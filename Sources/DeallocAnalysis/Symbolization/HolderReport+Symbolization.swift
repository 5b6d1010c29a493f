import DeallocLog

extension HolderReport {
  /// This report with the frames it carries (its allocation stack, its retain/release
  /// history's stacks) resolved further by `symbolizer` (`--symbolize`: file and line).
  /// Each distinct stack goes to the symbolizer once, as its contract asks: a history's
  /// events share few stacks.
  func symbolized(with symbolizer: inout any FrameSymbolizer) -> HolderReport {
    var report = self
    var resolved: [[UInt64]: [Frame]] = [:]
    func resolve(_ frames: [Frame]) -> [Frame] {
      guard !frames.isEmpty else { return frames }
      let key = frames.map(\.ip)
      if let known = resolved[key] { return known }
      let result = symbolizer.symbolize(frames)
      resolved[key] = result
      return result
    }
    report.allocationStack = resolve(report.allocationStack)
    if var history = report.retainHistory {
      for index in history.events.indices {
        history.events[index].frames = resolve(history.events[index].frames)
      }
      report.retainHistory = history
    }
    return report
  }
}
