import DeallocQueue

/// What the live `DeallocQueue`s know about one object at one moment.
struct QueueLookup {
  /// The queues the object waits in now (one, unless it was enqueued twice).
  var queues: [DeallocQueue]
  /// The tracer's id for the object, when a queue holds it and tracing was on at enqueue.
  var traceID: UInt64?

  /// Asks every live queue whether `object` waits in it.
  ///
  /// A linear scan of every queue under its lock: meant for the end of a test, not for
  /// hot paths.
  init(for object: AnyObject) {
    queues = DeallocQueue.liveQueues.filter { $0.isPending(object) }
    traceID = queues.lazy.compactMap { $0.traceID(of: object) }.first
  }

  var isPending: Bool { !queues.isEmpty }
}
