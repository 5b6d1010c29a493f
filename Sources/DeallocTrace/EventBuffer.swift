import CTraceRuntime
import Synchronization

/// The hand-over between recording threads and the writer: a double buffer under one lock.
///
/// Producers append an event (and its raw frames) under the lock; the writer swaps the
/// whole batch out in O(1) and formats it outside the lock. Both arrays keep their
/// capacity across swaps, so a warm buffer never allocates.
///
/// No event is ever dropped while the session is open: when `capacity` events are
/// waiting, producers wait for the writer (back-pressure) instead. Two kinds of push never
/// wait: the writer's own (it would wait for itself), and the commit half of an enqueue,
/// which runs under the queue's lock; its room was waited for in the prepare half, before
/// that lock, so the buffer overshoots by at most one event per enqueuing thread.
///
/// Once closing, pushes are refused and counted: the `end` record's `lost` is that count,
/// and a refused release takes its object out of `pending` (no queue holds it any more).
final class EventBuffer: @unchecked Sendable {
  enum State {
    case open
    /// `finish()` or exit: the writer writes what is left, then `end`.
    case closing
    /// I/O failed; nothing more is accepted.
    case failed
  }

  let capacity: Int
  private let monitor = Monitor()
  private var events: [TraceEvent] = []
  private var frames: [UInt] = []
  private var state = State.open
  private var waitingProducers = 0
  /// Events accepted so far, and events the writer has written (both under the lock).
  private var accepted = 0
  private var written = 0
  /// A racy copy of `events.count` for the hot path's "is there room" check, which then
  /// takes the lock only when the buffer looks full.
  private let fill = Atomic<Int>(0)
  /// Set (once) when the buffer stops accepting events; readable without the lock.
  private let stopped = Atomic<Bool>(false)
  /// What was refused while closing (under the lock): every record, the releases among
  /// them whose enqueue had been accepted, and the ids of refused enqueues (so that their
  /// objects' releases, refused as well, are not taken out of `pending` a second time).
  /// Only a push racing `finish()` lands here: at most a few per recording thread.
  private var refusedRecords = 0
  private var refusedReleasesOfRecordedObjects = 0
  private var refusedEnqueueIDs: Set<UInt64> = []

  init(capacity: Int, maxFrames: Int) {
    self.capacity = capacity
    events.reserveCapacity(capacity + 64)
    frames.reserveCapacity((capacity + 64) * max(maxFrames, 1))
  }

  /// Waits, outside any queue lock, until the buffer has room or the session is over.
  /// The writer thread never waits.
  func waitForRoom() {
    guard fill.load(ordering: .relaxed) >= capacity, ctrace_is_writer_thread() == 0 else {
      return
    }
    monitor.lock()
    while events.count >= capacity && state == .open {
      waitingProducers += 1
      monitor.signal(Monitor.data)
      monitor.wait(Monitor.room, nanoseconds: 50_000_000)
      waitingProducers -= 1
    }
    monitor.unlock()
  }

  /// Appends `event` with `frameCount` frames from `source`. Returns false when the session
  /// no longer accepts events. With `mayWait`, waits for room first.
  @discardableResult
  func push(
    _ event: consuming TraceEvent, frames source: UnsafePointer<UInt>? = nil, frameCount: Int = 0,
    mayWait: Bool = true
  ) -> Bool {
    if mayWait { waitForRoom() }
    monitor.lock()
    guard state == .open else {
      if state == .closing { countRefusal(of: event) }
      monitor.unlock()
      return false
    }
    event.frameStart = frames.count
    event.frameCount = frameCount
    if let source, frameCount > 0 {
      frames.append(contentsOf: UnsafeBufferPointer(start: source, count: frameCount))
    }
    events.append(event)
    accepted += 1
    let count = events.count
    fill.store(count, ordering: .relaxed)
    if count == capacity / 2 || count >= capacity {
      monitor.signal(Monitor.data)
    }
    monitor.unlock()
    return true
  }

  /// Called with the lock held, for a push refused while closing.
  private func countRefusal(of event: borrowing TraceEvent) {
    refusedRecords += 1
    switch event.payload {
    case .enqueue(let enqueue):
      refusedEnqueueIDs.insert(enqueue.objectID)
    case .release(let objectID, _):
      if !refusedEnqueueIDs.contains(objectID) {
        refusedReleasesOfRecordedObjects += 1
      }
    default:
      break
    }
  }

  /// The records refused so far while closing, and how many of them were releases of
  /// objects whose enqueue is in the log.
  func refusals() -> (records: Int, releasesOfRecordedObjects: Int) {
    monitor.lock()
    defer { monitor.unlock() }
    return (refusedRecords, refusedReleasesOfRecordedObjects)
  }

  /// Whether the buffer has stopped accepting events, without taking the lock (a push
  /// that raced the close may still learn it only from its refusal).
  var hasStopped: Bool {
    stopped.load(ordering: .acquiring)
  }

  /// Whether pushes are still accepted.
  var isOpen: Bool {
    monitor.lock()
    defer { monitor.unlock() }
    return state == .open
  }

  /// The writer's side: waits up to `nanoseconds` for events, then swaps them (and their
  /// frames) into the given arrays, which must be empty. Returns the state seen.
  func take(
    into batch: inout [TraceEvent], frames batchFrames: inout [UInt],
    waitingAtMost nanoseconds: UInt64
  ) -> State {
    monitor.lock()
    if events.count < capacity / 2 && state == .open && waitingProducers == 0 {
      monitor.wait(Monitor.data, nanoseconds: nanoseconds)
    }
    swap(&events, &batch)
    swap(&frames, &batchFrames)
    fill.store(0, ordering: .relaxed)
    let seen = state
    if waitingProducers > 0 {
      monitor.broadcast(Monitor.room)
    }
    monitor.unlock()
    return seen
  }

  /// The writer's report that `count` more events reached the file.
  func markWritten(_ count: Int) {
    monitor.lock()
    written += count
    monitor.broadcast(Monitor.room)
    monitor.unlock()
  }

  /// Waits until every event accepted before the call is written (or the session is over).
  /// Wakes the writer at once instead of at its next flush interval.
  func waitUntilWritten() {
    monitor.lock()
    let target = accepted
    while written < target && state == .open {
      waitingProducers += 1
      monitor.signal(Monitor.data)
      monitor.wait(Monitor.room, nanoseconds: 10_000_000)
      waitingProducers -= 1
    }
    monitor.unlock()
  }

  /// Stops accepting events and wakes the writer, which writes what is left and `end`.
  func close() {
    transition(to: .closing)
  }

  /// Stops accepting events after an I/O failure and wakes everyone.
  func fail() {
    transition(to: .failed)
  }

  private func transition(to newState: State) {
    monitor.lock()
    if state == .open || newState == .failed {
      state = newState
    }
    stopped.store(true, ordering: .releasing)
    monitor.broadcast(Monitor.room)
    monitor.signal(Monitor.data)
    monitor.unlock()
  }
}
