/// A `holders` record's `history` (docs/log-format.md): `{"events":[{"op":…,"count":…,
/// "frames":[…]},…],"dropped":…,"lost":…}`. Unknown keys are skipped, as everywhere; an
/// event whose `op` is none of `retain`, `release`, `alloc`, `enqueue`, `unowned-retain`,
/// `unowned-release` is left out (a later recorder may add kinds).
extension RecordParser {
  private enum HistoryKey {
    static let events: UInt64 = 0x73_746e_6576_65  // "events"
    static let dropped: UInt64 = 0x64_6570_706f_7264  // "dropped"
    static let lost: UInt64 = 0x7473_6f6c  // "lost"
    static let op: UInt64 = 0x706f  // "op"
    static let count: UInt64 = 0x74_6e75_6f63  // "count"
    static let frames: UInt64 = 0x7365_6d61_7266  // "frames"
  }

  /// The most events one history keeps: what a recorder writes at most, with room; a record
  /// with more is read up to here and says the rest were dropped.
  static let maximumHistoryEvents = 4_096

  mutating func readHistory(_ s: inout JSONScanner) throws(Failure) -> RetainHistory {
    var history = RetainHistory(events: [])
    try s.expect(UInt8(ascii: "{"), "a history object")
    if s.consume(UInt8(ascii: "}")) { return history }
    repeat {
      let key = try s.readKey()
      if s.consumeNull() { continue }
      switch key {
      case HistoryKey.events:
        try s.expect(UInt8(ascii: "["), "'['")
        if !s.consume(UInt8(ascii: "]")) {
          repeat {
            let event = try readHistoryEvent(&s)
            guard let event else { continue }
            if history.events.count < Self.maximumHistoryEvents {
              history.events.append(event)
            } else {
              history.droppedPaired += 1
            }
          } while s.consume(UInt8(ascii: ","))
          try s.expect(UInt8(ascii: "]"), "',' or ']' in history events")
        }
      case HistoryKey.dropped: history.droppedPaired += Int(clamping: try s.readInteger())
      case HistoryKey.lost: history.lost = Int(clamping: try s.readInteger())
      default: try s.skipValue()
      }
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "}"), "',' or '}' in a history")
    return history
  }

  private mutating func readHistoryEvent(_ s: inout JSONScanner) throws(Failure)
    -> RetainHistory.Event?
  {
    try s.expect(UInt8(ascii: "{"), "a history event")
    var op: String?
    var count: Int?
    var frames: [Frame] = []
    if !s.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try s.readKey()
        if s.consumeNull() { continue }
        switch key {
        case HistoryKey.op: op = try s.readString()
        case HistoryKey.count: count = Int(clamping: try s.readInteger())
        case HistoryKey.frames: frames = try readFrames(&s)
        default: try s.skipValue()
        }
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}' in a history event")
    }
    guard let kind = op.flatMap(RetainHistory.Kind.init(rawValue:)), kind != .unseen else {
      return nil
    }
    return RetainHistory.Event(kind, countAfter: count, frames: frames)
  }
}
