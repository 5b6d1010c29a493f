/// Sentences the diff's renderers share.
enum DiffSummary {
  /// "1 new finding, 1 gone, 2 changed in count, 3 unchanged; false leaks: 1 appeared".
  static func sentence(_ diff: FindingsDiff) -> String {
    var text =
      RenderingSupport.plural(diff.new.count, "new finding") + ", \(diff.gone.count) gone,"
      + " \(diff.changed.count) changed in count, \(diff.unchanged.count) unchanged"
    let appeared = diff.falseLeaksAppeared.count
    let disappeared = diff.falseLeaksDisappeared.count
    if appeared + disappeared > 0 {
      text += "; false leaks: \(appeared) appeared, \(disappeared) disappeared"
    }
    return text
  }

  /// A side's inputs and what they were.
  static func describe(_ side: DiffSide) -> String {
    side.inputs.joined(separator: ", ") + (side.isSavedReport ? " (saved report)" : " (logs)")
  }

  /// "FeedTests.testClose saw Feed.DataController while it waited in a queue".
  static func falseLeak(_ change: FindingsDiff.FalseLeakChange) -> String {
    let label = change.key.label.isEmpty ? "a leak check" : change.key.label
    return "\(label) saw \(change.key.type) while it waited in a queue"
  }
}
