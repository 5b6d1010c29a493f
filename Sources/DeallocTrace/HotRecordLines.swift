import DeallocWire

/// The hot record kinds' lines, each in `WireSchema`'s key order, the one the reader's fast
/// path reads: written by the recorder's writer, and by the benchmark's generated logs, so
/// that the report is measured on the lines the recorder writes, not on a copy of them.
extension JSONLine {
  package mutating func enqueue(
    time: UInt64, id: UInt64, hiddenAddress: UInt, type: String, queue: String,
    threadID: Int64, depth: Int, stack: Int?, retainCount: Int, elementCount: Int?
  ) {
    begin(WireKind.enqueue)
    field(WireKey.time, time)
    field(WireKey.id, id)
    field(WireKey.object, hiddenHex: hiddenAddress)
    field(WireKey.type, type)
    field(WireKey.queue, queue)
    field(WireKey.threadID, threadID)
    field(WireKey.depth, depth)
    if let stack { field(WireKey.stack, stack) }
    field(WireKey.retainCount, retainCount)
    if let elementCount { field(WireKey.elementCount, elementCount) }
    end()
  }

  /// A release; `survivorRetainCount` is the retain count of an object that survived it,
  /// `nil` when the release freed the object.
  package mutating func release(
    time: UInt64, id: UInt64, threadID: Int64, survivorRetainCount: Int?
  ) {
    begin(WireKind.release)
    field(WireKey.time, time)
    field(WireKey.id, id)
    field(WireKey.threadID, threadID)
    if let survivorRetainCount {
      field(WireKey.freed, false)
      field(WireKey.retainCount, survivorRetainCount)
    } else {
      field(WireKey.freed, true)
    }
    end()
  }

  package mutating func drain(
    time: UInt64, queue: String, count: Int, threadID: Int64, reason: DrainReason
  ) {
    begin(WireKind.drain)
    field(WireKey.time, time)
    field(WireKey.queue, queue)
    field(WireKey.drainCount, count)
    field(WireKey.threadID, threadID)
    field(WireKey.reason, reason.rawValue)
    end()
  }

  package mutating func dealloc(time: UInt64, id: UInt64) {
    begin(WireKind.dealloc)
    field(WireKey.time, time)
    field(WireKey.id, id)
    end()
  }

  /// A leak check; `id` 0 when the checked object was never enqueued.
  package mutating func check(
    time: UInt64, hiddenAddress: UInt, type: String, alive: Bool, label: String, id: UInt64,
    threadID: Int64
  ) {
    begin(WireKind.check)
    field(WireKey.time, time)
    field(WireKey.object, hiddenHex: hiddenAddress)
    field(WireKey.type, type)
    field(WireKey.alive, alive)
    field(WireKey.label, label)
    if id != 0 { field(WireKey.id, id) }
    field(WireKey.threadID, threadID)
    end()
  }
}
