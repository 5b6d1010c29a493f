extension QueueTracing {
  /// The objects one queue holds, for the leak census: its label and their addresses, each
  /// XOR-ed with the census's key (a plain address in this array's storage would itself be
  /// a reference to the object for the census to count).
  package struct PendingQueue: Sendable {
    package var label: String
    package var hidden: [UInt]

    package init(label: String, hidden: [UInt]) {
      self.label = label
      self.hidden = hidden
    }
  }

  /// Registered by `DeallocQueue` when its first queue is created; nil before.
  private static let censusLookup = AnnotatedMutex<
    (@Sendable (_ key: UInt, _ drainWait: Duration) -> [PendingQueue])?
  >(nil)

  /// Lets the queue answer the census's question, "what does each queue hold now", after
  /// letting the drains under way finish (each waited for at most `drainWait`). Idempotent.
  package static func registerCensusLookup(
    _ lookup: @escaping @Sendable (_ key: UInt, _ drainWait: Duration) -> [PendingQueue]
  ) {
    censusLookup.withLock { registered in
      if registered == nil { registered = lookup }
    }
  }

  /// What every live queue holds, hidden with `key`; empty before any queue exists.
  package static func pendingForCensus(hiddenWith key: UInt, drainWait: Duration)
    -> [PendingQueue]
  {
    guard let lookup = censusLookup.withLock({ $0 }) else { return [] }
    return lookup(key, drainWait)
  }
}
