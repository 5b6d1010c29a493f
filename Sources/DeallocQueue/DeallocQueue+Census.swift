import DeallocHooks

extension DeallocQueue {
  /// The census's lookup, made once.
  static let censusLookup = QueueTracing.CensusLookup(
    DeallocQueue.pendingForCensus(hiddenWith:drainWaitNanoseconds:))

  /// What every live queue holds for the leak census (`QueueTracing.pendingForCensus`):
  /// first the drains another thread is running finish (each waited for at most
  /// `drainWait`, never from inside a drain of the same queue), so that their objects are
  /// freed or back in no queue, then each queue's entries are listed, hidden with `key`.
  ///
  /// Why not run the batches whose timer is due: a census must not release objects on the
  /// caller's thread (their `deinit`s would run inside a checkpoint); an object whose drain
  /// is due but not begun is still delayed, and counted so.
  @Sendable
  package static func pendingForCensus(hiddenWith key: UInt, drainWaitNanoseconds: Int64)
    -> [QueueTracing.PendingQueue]
  {
    let drainWait = Duration.nanoseconds(drainWaitNanoseconds)
    return liveQueues.map { queue in
      if !queue.isDrainingOnCallingThread {
        queue.waitForDrainsInFlight(timeout: drainWait)
      }
      return QueueTracing.PendingQueue(
        label: queue.label, hidden: queue.pendingAddresses(hiddenWith: key))
    }
  }
}
