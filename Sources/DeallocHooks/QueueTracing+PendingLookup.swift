extension QueueTracing {
  /// Asks the queues whether the object at `address` waits in one of them; registered by
  /// `DeallocQueue` when its first queue is created.
  private static let pendingLookup = AnnotatedMutex<(@Sendable (UInt) -> Bool)?>(nil)

  /// Lets the queue answer "is the object at this address waiting in any queue" for the
  /// recorder, which scans for holders only of objects that no queue holds (a queued one
  /// is a delayed dealloc, and the queue would be its holder). Idempotent.
  package static func registerPendingLookup(_ lookup: @escaping @Sendable (UInt) -> Bool) {
    pendingLookup.withLock { registered in
      if registered == nil { registered = lookup }
    }
  }

  /// Whether the object at `address` waits in any queue (false before any queue exists).
  package static func isPendingInAnyQueue(address: UInt) -> Bool {
    guard let lookup = pendingLookup.withLock({ $0 }) else { return false }
    return lookup(address)
  }
}
