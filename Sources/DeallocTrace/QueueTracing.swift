/// The seam between `DeallocQueue` and the recorder.
///
/// The queue calls these hooks only when `isRecording` is true, so that with tracing off
/// it pays one predictable branch and nothing else. `package` access keeps the seam out of
/// the public API: applications use `DeallocTrace`, never these hooks.
package enum QueueTracing {
  /// Why a batch is being released.
  package enum DrainReason: String, Sendable {
    /// The queue's delay after its first entry elapsed.
    case timer
    /// Someone called `drain()`.
    case explicit
  }

  /// A captured, not yet committed enqueue: made on the caller's thread before the queue's
  /// lock is taken, so that the expensive part (the stack) is outside the lock.
  package struct PendingEnqueue: Sendable {
    /// The object's session-unique id; 0 when nothing is being recorded.
    package var id: UInt64

    package init(id: UInt64) {
      self.id = id
    }
  }

  /// Whether the tracer is recording now. One relaxed load.
  @inline(__always)
  package static var isRecording: Bool { false }

  /// Allocates the object's id and captures the enqueue stack on the calling thread.
  package static func prepareEnqueue(_ object: AnyObject) -> PendingEnqueue {
    PendingEnqueue(id: 0)
  }

  /// Hands the enqueue record over. Called while the queue's lock is held, right after the
  /// push, so that the record precedes any `drain` or `release` that can name the object.
  package static func commitEnqueue(_ pending: PendingEnqueue, queue: String, depth: Int) {}

  /// Records that `queue` began releasing `count` objects on the calling thread.
  package static func recordDrain(queue: String, count: Int, why: DrainReason) {}

  /// Drops the queue's reference to `object` and records whether that release freed it.
  package static func release(_ object: consuming AnyObject, id: UInt64) {
    _ = consume object
  }
}
