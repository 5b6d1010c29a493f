import DeallocLog
import Testing

/// An enqueue's optional fields are packed (a value and a presence bit each): each must read
/// back as set, absent must differ from zero, and equality must follow the fields' values.
@Suite struct EnqueueRecordTests {
  @Test func optionalFieldsReadBackAsSetAndAbsentIsNotZero() {
    let plain = EnqueueRecord(time: 1, id: 2, object: Address(3), type: "T", queue: "q")
    #expect(plain.tid == nil && plain.depth == nil && plain.stack == nil)
    #expect(plain.retainCount == nil)
    let values: [(tid: Int64?, depth: Int?, stack: Int64?, retainCount: Int?)] = [
      (0, nil, nil, nil), (nil, 0, nil, nil), (nil, nil, 0, nil), (nil, nil, nil, 0),
      (-1, 7, .max, 2), (.min, .max, -5, 0),
    ]
    for (tid, depth, stack, retainCount) in values {
      var record = plain
      record.tid = tid
      record.depth = depth
      record.stack = stack
      record.retainCount = retainCount
      #expect(record.tid == tid && record.depth == depth && record.stack == stack)
      #expect(record.retainCount == retainCount)
      #expect(record != plain)
      #expect(
        record
          == EnqueueRecord(
            time: 1, id: 2, object: Address(3), type: "T", queue: "q", tid: tid, depth: depth,
            stack: stack, retainCount: retainCount))
      // Cleared again, each field is absent, and the record equals one never given it.
      record.tid = nil
      record.depth = nil
      record.stack = nil
      record.retainCount = nil
      #expect(record == plain)
    }
  }
}
