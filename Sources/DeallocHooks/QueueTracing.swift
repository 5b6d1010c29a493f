import CQueueRuntime

/// The queue's side of tracing: the calls `DeallocQueue` makes, forwarded to the recorder's
/// `QueueHooks` when it installed them.
///
/// The queue calls the enqueue and drain hooks only while `isRecording` is true, so that
/// with tracing off it pays one predictable branch. `package` access keeps the seam out of
/// the public API: applications use `DeallocTrace`, never these calls.
package enum QueueTracing {
  /// The drain delay of `DeallocQueue.shared`, here so that the recorder's `session` record
  /// states it (`delay_ms`) without importing the queue.
  package static let sharedQueueDelay = Duration.milliseconds(100)

  /// Whether the tracer is recording now. One relaxed load of a C global, inlined.
  @inlinable
  package static var isRecording: Bool {
    @inline(__always) get { cdeallochooks_is_recording() != 0 }
  }

  /// Turns the switch that `isRecording` reads; the recorder's, at start and finish.
  package static func setRecording(_ on: Bool) {
    cdeallochooks_set_recording(on ? 1 : 0)
  }

  /// Turns tracing on when `DEALLOCTRACE_LOG` or `DEALLOCTRACE` is set and the recorder is
  /// linked. The queue calls this from its initializer, so every process that creates a
  /// queue is covered with no code change; after the first call it costs one lock, on queue
  /// creation only.
  package static func bootstrapFromEnvironment() {
    cdeallochooks_start_recorder_from_environment()
  }

  /// Takes the object's id and captures the enqueue stack on the calling thread: 0 when
  /// nothing is recorded.
  ///
  /// Generic so that the object reaches the recorder without a conversion to `AnyObject`
  /// (which retains in debug builds and would skew `rc`). Never inlined: the recorder's
  /// backtrace cut counts this frame (`QueueHooks`).
  @inline(never)
  package static func prepareEnqueue<T: AnyObject>(_ object: T) -> UInt64 {
    guard let prepare = QueueHooks.installed?.prepareEnqueue else { return 0 }
    return prepare(
      unsafeBitCast(object, to: UnsafeRawPointer.self),
      unsafeBitCast(type(of: object) as AnyObject.Type, to: UnsafeRawPointer.self))
  }

  /// `prepareEnqueue(_:)` for the box a value waits in: the record names `valueType`, the
  /// value's type, instead of the box's, which no reader knows.
  ///
  /// Never inlined, for the same backtrace cut (`QueueHooks`).
  @inline(never)
  package static func prepareEnqueue<Box: AnyObject>(_ box: Box, naming valueType: Any.Type)
    -> UInt64
  {
    guard let prepare = QueueHooks.installed?.prepareEnqueue else { return 0 }
    return prepare(
      unsafeBitCast(box, to: UnsafeRawPointer.self),
      unsafeBitCast(valueType, to: UnsafeRawPointer.self))
  }

  /// Hands the enqueue record over. Called while the queue's lock is held, right after the
  /// push, so that the record precedes any `drain` or `release` that can name the object.
  /// `elementCount` is a queued collection's, `nil` for an object or another value.
  @inline(__always)
  package static func commitEnqueue(
    id: UInt64, queue: String, depth: Int, elementCount: Int? = nil
  ) {
    guard id != 0, let commit = QueueHooks.installed?.commitEnqueue else { return }
    commit(id, queue, depth, elementCount)
  }

  /// Records that `queue` began releasing a batch on the calling thread.
  ///
  /// - Parameter count: the `drain` record's `n`: how many entries of the batch carry a
  ///   trace id, i.e. how many `release` records follow. Untraced entries (enqueued while
  ///   tracing was off) have no `enqueue` record, so counting them would make `n` disagree
  ///   with the releases.
  package static func recordDrain(queue: String, count: Int, why: DrainReason) {
    QueueHooks.installed?.recordDrain(queue, count, why)
  }

  /// Drops the queue's reference to `object` and records whether that release freed it.
  package static func release(_ object: consuming AnyObject, id: UInt64) {
    guard let release = QueueHooks.installed?.release else {
      _ = consume object
      return
    }
    // Moved, not copied: the recorder's release must drop the queue's last reference.
    release(consume object, id)
  }

  /// Lets the recorder clear what a drain left on this thread's stack; the queue calls it
  /// after every drain, outside the frames that held the objects.
  package static func drainDidFinish() {
    QueueHooks.installed?.drainDidFinish()
  }
}
