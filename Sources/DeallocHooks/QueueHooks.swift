import CQueueRuntime

/// What the recorder does at each step of a queue's work, installed by the recorder.
///
/// The queue cannot import the recorder (a host may link the queue alone), so the recorder
/// hands its functions over when tracing starts. Installed once and kept for the life of
/// the process, so that the hot path reads them with one acquire load and no reference
/// counting. `QueueTracing` is the queue's side of these calls.
///
/// Implementation requirements: `prepareEnqueue` captures the enqueue stack itself and
/// cuts exactly one frame above its own, `QueueTracing.prepareEnqueue`; pass a function,
/// not a closure that calls one, so that no thunk frame sits in between.
package struct QueueHooks: Sendable {
  /// Takes the object's id and its enqueue stack on the caller's thread, before the queue's
  /// lock; returns the id, or 0 when nothing is recorded. `metatype` names the record's type:
  /// the object's, or for a boxed value the value's (`Any.Type`'s metadata pointer).
  package var prepareEnqueue:
    @Sendable (_ address: UnsafeRawPointer, _ metatype: UnsafeRawPointer) -> UInt64
  /// Hands over the prepared enqueue record, under the queue's lock (never waits), with a
  /// queued collection's element count (nil for anything else).
  package var commitEnqueue:
    @Sendable (_ id: UInt64, _ queue: String, _ depth: Int, _ elementCount: Int?) -> Void
  /// Records that a drain began; `count` is how many of its entries carry an id.
  package var recordDrain: @Sendable (_ queue: String, _ count: Int, _ why: DrainReason) -> Void
  /// Drops the queue's last reference to a traced object and records what that did.
  package var release: @Sendable (_ object: consuming AnyObject, _ id: UInt64) -> Void
  /// Runs after every drain, traced or not, outside the frames that held the objects.
  package var drainDidFinish: @Sendable () -> Void

  package init(
    prepareEnqueue: @escaping @Sendable (UnsafeRawPointer, UnsafeRawPointer) -> UInt64,
    commitEnqueue: @escaping @Sendable (UInt64, String, Int, Int?) -> Void,
    recordDrain: @escaping @Sendable (String, Int, DrainReason) -> Void,
    release: @escaping @Sendable (consuming AnyObject, UInt64) -> Void,
    drainDidFinish: @escaping @Sendable () -> Void
  ) {
    self.prepareEnqueue = prepareEnqueue
    self.commitEnqueue = commitEnqueue
    self.recordDrain = recordDrain
    self.release = release
    self.drainDidFinish = drainDidFinish
  }

  /// Installs `hooks` for the life of the process. The first install wins: the recorder
  /// installs the same hooks at every start, and a later call changes nothing.
  package static func install(_ hooks: QueueHooks) {
    guard cdeallochooks_hooks() == nil else { return }
    let box = Unmanaged.passRetained(Box(hooks))
    if cdeallochooks_install(box.toOpaque()) == 0 {
      box.release()
    }
  }

  /// The installed hooks, read without retaining their box; nil before the recorder
  /// installed them.
  @inline(__always)
  static var installed: QueueHooks? {
    guard let pointer = cdeallochooks_hooks() else { return nil }
    return Unmanaged<Box>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.hooks }
  }

  /// Kept forever once installed, so readers may borrow it without a retain.
  private final class Box: Sendable {
    let hooks: QueueHooks

    init(_ hooks: QueueHooks) {
      self.hooks = hooks
    }
  }
}
