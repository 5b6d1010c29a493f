extension QueueTracing {
  /// The registered lookup, in a class of its own for the reason ``CensusLookup`` gives: a
  /// function value stored directly in the generic mutex kept two closure contexts alive
  /// per call.
  package final class PendingLookup: Sendable {
    let isPending: @Sendable (_ address: UInt) -> Bool

    package init(_ isPending: @escaping @Sendable (_ address: UInt) -> Bool) {
      self.isPending = isPending
    }
  }

  /// Asks the queues whether the object at `address` waits in one of them; registered by
  /// `DeallocQueue` when its first queue is created.
  private static let pendingLookup = AnnotatedMutex<PendingLookup?>(nil)

  /// Lets the queue answer "is the object at this address waiting in any queue" for the
  /// recorder, which scans for holders only of objects that no queue holds (a queued one
  /// is a delayed dealloc, and the queue would be its holder). Idempotent.
  package static func registerPendingLookup(_ lookup: PendingLookup) {
    pendingLookup.withLock { registered in
      if registered == nil { registered = lookup }
    }
  }

  /// Whether the object at `address` waits in any queue (false before any queue exists).
  package static func isPendingInAnyQueue(address: UInt) -> Bool {
    guard let registered = pendingLookup.withLock({ $0 }) else { return false }
    return registered.isPending(address)
  }
}
