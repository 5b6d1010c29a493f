import CUnwind

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
  /// lock is taken, so that the expensive part (the stack) is outside the lock. The frames
  /// wait in the thread's scratch array; nothing can record on this thread between
  /// `prepareEnqueue` and `commitEnqueue`, because the queue runs no user code in between.
  package struct PendingEnqueue: Sendable {
    /// The object's session-unique id; 0 when nothing is being recorded.
    package var id: UInt64
    var time: UInt64 = 0
    var address: UInt = 0
    var metatype: UInt = 0
    var retainCount: Int = 0
    var frameCount: Int = 0

    package init(id: UInt64) {
      self.id = id
    }
  }

  /// Whether the tracer is recording now. One relaxed load of a C global, inlined.
  @inlinable
  package static var isRecording: Bool {
    @inline(__always) get { cunwind_tracing_is_on() != 0 }
  }

  /// Turns tracing on when `DEALLOCTRACE_LOG` or `DEALLOCTRACE` is set. The queue calls
  /// this from its initializer, so every process that creates a queue is covered with no
  /// code change; after the first call it costs one lock, on queue creation only.
  package static func bootstrapFromEnvironment() {
    Tracer.startFromEnvironmentOnce()
  }

  /// Allocates the object's id and captures the enqueue stack on the calling thread.
  ///
  /// Generic so that the object reaches the tracer without a conversion to `AnyObject`
  /// (which retains in debug builds and would skew `rc`); the work is in the non-generic
  /// half, so no generic metadata is instantiated per call. Both are `@inline(never)`:
  /// the backtrace cut counts their frames (see `captureStack`).
  @inline(never)
  package static func prepareEnqueue<T: AnyObject>(_ object: T) -> PendingEnqueue {
    prepareEnqueue(
      address: unsafeBitCast(object, to: UnsafeRawPointer.self),
      metatype: unsafeBitCast(type(of: object) as AnyObject.Type, to: UnsafeRawPointer.self))
  }

  @inline(never)
  static func prepareEnqueue(
    address: UnsafeRawPointer, metatype: UnsafeRawPointer
  ) -> PendingEnqueue {
    guard let session = Tracer.session() else { return PendingEnqueue(id: 0) }
    // The caller's strong reference, now the queue's `taken`, is the one counted here.
    let retainCount = cunwind_retain_count(address)
    session.announceCurrentThread()
    session.buffer.waitForRoom()
    var pending = PendingEnqueue(id: cunwind_next_object_id())
    if session.frames > 0 {
      pending.frameCount = captureStack(into: cunwind_thread_scratch(), capacity: session.frames)
    }
    pending.time = session.now()
    pending.address = UInt(bitPattern: address)
    pending.metatype = UInt(bitPattern: metatype)
    pending.retainCount = retainCount
    return pending
  }

  /// Captures the stack of `prepareEnqueue`'s caller: the cut is found by address, two
  /// frames (the two halves of `prepareEnqueue`) above this function, whatever the
  /// optimizer inlined below.
  @inline(never)
  static func captureStack(into buffer: UnsafeMutablePointer<UInt>, capacity: Int) -> Int {
    let count = cunwind_backtrace_above_caller(buffer, Int32(capacity), 2)
    return Int(count)
  }

  /// Hands the enqueue record over. Called while the queue's lock is held, right after the
  /// push, so that the record precedes any `drain` or `release` that can name the object.
  /// Never waits: the room was waited for in `prepareEnqueue`, before the lock.
  package static func commitEnqueue(_ pending: PendingEnqueue, queue: String, depth: Int) {
    guard pending.id != 0, let session = Tracer.session(), pending.id >= session.firstID else {
      return
    }
    var event = TraceEvent(kind: .enqueue)
    event.time = pending.time
    event.threadID = cunwind_thread_id()
    event.objectID = pending.id
    event.address = pending.address
    event.metatype = UnsafeRawPointer(bitPattern: pending.metatype)
    event.retainCount = pending.retainCount
    event.count = depth
    event.text = queue
    session.buffer.push(
      event, frames: UnsafePointer(cunwind_thread_scratch()), frameCount: pending.frameCount,
      mayWait: false)
  }

  /// Records that `queue` began releasing `count` objects on the calling thread, then looks
  /// at the survivors (each drain is a moment when earlier survivors may have died).
  package static func recordDrain(queue: String, count: Int, why: DrainReason) {
    guard let session = Tracer.session() else { return }
    session.announceCurrentThread()
    var event = TraceEvent(kind: .drain)
    event.time = session.now()
    event.threadID = cunwind_thread_id()
    event.count = count
    event.flag = why == .timer
    event.text = queue
    session.buffer.push(event)
    Tracer.checkSurvivors(session)
  }

  /// Drops the queue's reference to `object` and records whether that release freed it.
  ///
  /// `freed` is observed, not inferred from a retain count: a weak reference is taken
  /// before the release and loaded after it. The runtime marks an object as deiniting in
  /// the same atomic operation that drops its last strong reference, and from then on weak
  /// loads give nil; before our release we hold a strong reference, so the object cannot be
  /// deiniting yet. Hence a nil load means the last strong reference went away at our
  /// release or after it; a non-nil load means the object outlived our release (someone
  /// else holds it): `freed: false`, a survivor, watched until it dies.
  ///
  /// The one window: another thread that held the object and drops it in the few
  /// nanoseconds between our release and our load makes the object look freed by us. Its
  /// reference existed at our release, so strictly that is a survivor that died at once;
  /// no API short of hooking `swift_release` tells the two apart. Reading the retain count
  /// first would not close it either (the count can change between the read and the
  /// release). The report treats both outcomes as "freed on time", which is what they are.
  package static func release(_ object: consuming AnyObject, id: UInt64) {
    let session = Tracer.session().flatMap { id >= $0.firstID ? $0 : nil }
    // The weak reference is made in a function of its own, so no strong copy of ours can
    // outlive the `consume` below (a local `let` could, until the end of this scope).
    let survivor = session == nil ? nil : Survivor.watching(object, id: id)
    _ = consume object
    guard let session, let survivor else { return }
    var event = TraceEvent(kind: .release)
    event.objectID = id
    if let alive = survivor.object {
      // `alive` is one strong reference of ours; the rest are the holders'.
      event.count = max(0, cunwind_retain_count(Unmanaged.passUnretained(alive).toOpaque()) - 1)
      event.flag = false
    } else {
      event.flag = true
    }
    session.announceCurrentThread()
    event.time = session.now()
    event.threadID = cunwind_thread_id()
    guard session.buffer.push(event) else { return }
    if !event.flag {
      session.survivors.withLock { $0.append(survivor) }
      session.survivorCount.add(1, ordering: .relaxed)
    }
  }
}
