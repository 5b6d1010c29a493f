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

  /// The registered lookup, in a class of its own: a function value stored directly in the
  /// generic mutex is reabstracted on its way in and out, and on this toolchain each call
  /// through such a copy kept two closure contexts alive (the census's growth across
  /// checkpoints found it: 1,000,000 calls of `isPendingInAnyQueue`, which stores its
  /// lookup that way, took 25 MB more).
  package final class CensusLookup: Sendable {
    let lookup: @Sendable (_ key: UInt, _ drainWaitNanoseconds: Int64) -> [PendingQueue]

    package init(
      _ lookup: @escaping @Sendable (_ key: UInt, _ drainWaitNanoseconds: Int64) -> [PendingQueue]
    ) {
      self.lookup = lookup
    }
  }

  /// Registered by `DeallocQueue` when its first queue is created; nil before.
  private static let censusLookup = AnnotatedMutex<CensusLookup?>(nil)

  /// Lets the queue answer the census's question, "what does each queue hold now", after
  /// letting the drains under way finish (each waited for at most the given time).
  /// Idempotent.
  package static func registerCensusLookup(_ lookup: CensusLookup) {
    censusLookup.withLock { registered in
      if registered == nil { registered = lookup }
    }
  }

  /// What every live queue holds, hidden with `key`; empty before any queue exists.
  package static func pendingForCensus(hiddenWith key: UInt, drainWait: Duration)
    -> [PendingQueue]
  {
    guard let registered = censusLookup.withLock({ $0 }) else { return [] }
    return registered.lookup(key, Int64(drainWait.wholeNanoseconds))
  }
}
