/// The keys and the field order of the log's hot record kinds (`enqueue`, `release`,
/// `dealloc`, `drain`, `check`): nearly every line of a log.
///
/// Why one place: the recorder writes these lines, and the reader has two parsers for them,
/// the general one (any key order) and the fast path (`RecorderShapeParser`: the recorder's
/// exact key order, about twice as fast). The writer takes its keys from here, and tests
/// derive both parsers' constants from here and check that the fast path reads lines in
/// ``WireSchema`` order and every line a real recorded program writes. A key order changed
/// here, or in the writer only, fails a test instead of silently halving the report's speed.
/// The contract itself (which fields exist, which are optional) is docs/log-format.md.
package enum WireKey {
  /// The record's kind.
  package static let kind: StaticString = "ev"
  package static let time: StaticString = "t"
  package static let id: StaticString = "id"
  package static let object: StaticString = "obj"
  package static let type: StaticString = "type"
  package static let queue: StaticString = "q"
  package static let threadID: StaticString = "tid"
  package static let depth: StaticString = "depth"
  package static let stack: StaticString = "stack"
  package static let retainCount: StaticString = "rc"
  /// An enqueued array's element count: after every field the fast path reads, so that a
  /// line with it goes to the general parser and others keep their shape.
  package static let elementCount: StaticString = "count"
  package static let freed: StaticString = "freed"
  package static let drainCount: StaticString = "n"
  package static let reason: StaticString = "why"
  package static let alive: StaticString = "alive"
  package static let label: StaticString = "label"
}

/// The hot record kinds' names (the value of ``WireKey/kind``).
package enum WireKind {
  package static let enqueue: StaticString = "enqueue"
  package static let release: StaticString = "release"
  package static let dealloc: StaticString = "dealloc"
  package static let drain: StaticString = "drain"
  package static let check: StaticString = "check"
}

/// The order in which the recorder writes each hot kind's fields, after `ev`: the order the
/// fast path reads. An optional field may be left out; the others keep their order.
package enum WireSchema {
  package struct Field: Sendable {
    package let key: StaticString
    package let isOptional: Bool

    init(_ key: StaticString, optional: Bool = false) {
      self.key = key
      self.isOptional = optional
    }
  }

  package static let enqueue: [Field] = [
    Field(WireKey.time), Field(WireKey.id), Field(WireKey.object), Field(WireKey.type),
    Field(WireKey.queue), Field(WireKey.threadID, optional: true),
    Field(WireKey.depth, optional: true), Field(WireKey.stack, optional: true),
    Field(WireKey.retainCount, optional: true),
  ]
  package static let release: [Field] = [
    Field(WireKey.time), Field(WireKey.id), Field(WireKey.threadID, optional: true),
    Field(WireKey.freed), Field(WireKey.retainCount, optional: true),
  ]
  package static let dealloc: [Field] = [Field(WireKey.time), Field(WireKey.id)]
  package static let drain: [Field] = [
    Field(WireKey.time), Field(WireKey.queue), Field(WireKey.drainCount),
    Field(WireKey.threadID, optional: true), Field(WireKey.reason, optional: true),
  ]
  package static let check: [Field] = [
    Field(WireKey.time), Field(WireKey.object), Field(WireKey.type), Field(WireKey.alive),
    Field(WireKey.label), Field(WireKey.id, optional: true),
    Field(WireKey.threadID, optional: true),
  ]

  /// Each hot kind with its fields.
  package static let kinds: [(kind: StaticString, fields: [Field])] = [
    (WireKind.enqueue, enqueue), (WireKind.release, release), (WireKind.dealloc, dealloc),
    (WireKind.drain, drain), (WireKind.check, check),
  ]
}
