import CQueueRuntime
import Dispatch

/// Runs actions at deadlines, for the queues' batch timers: one thread of its own, parked on
/// a timerfd that is armed for the earliest deadline.
///
/// Why not `asyncAfter`: arming a dispatch timer wakes libdispatch's timer thread at once, and
/// the thread that pays for that wake is the one handing its graph to the queue, at the
/// moment the queue exists to make cheap (most of the hand-over of a 100,000-node tree on
/// this project's VM; docs/benchmarks.md). Arming a timerfd is one system call that wakes
/// nobody: the kernel wakes the timer's thread when the deadline comes, and a batch whose
/// deadline is later than the one armed costs no system call at all.
///
/// The trade-off: a thread for the process's lifetime, parked in `read(2)` with every signal
/// blocked, and a list of deadlines under a lock. The thread, the lock and `fork()` are
/// handled in C (`CQueueRuntime`, CDrainTimer.h), so that a process can fork beside the thread. Where no
/// timer or thread can be had (not Linux, no descriptor left) an action falls back to
/// `asyncAfter`.
enum DrainTimer {
  private struct Entry {
    var deadline: UInt64
    /// Orders entries of equal deadlines: the one that came first runs first.
    var sequence: UInt64
    var action: @Sendable () -> Void

    func isDue(before other: Entry) -> Bool {
      (deadline, sequence) < (other.deadline, other.sequence)
    }
  }

  /// Guarded by the C side's lock (`cdraintimer_lock`), which the fork handlers also take.
  private struct State {
    /// A binary min-heap by deadline: pushing and taking the next are logarithmic, however
    /// many timers of explicitly drained batches wait for their (long) deadlines.
    var pending = DeadlineHeap()
    var sequence: UInt64 = 0
    /// The deadline the timer is armed for, while it is.
    var armedFor: UInt64?
  }

  private struct DeadlineHeap {
    private var entries: [Entry] = []

    var next: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
      entries.append(entry)
      var child = entries.count - 1
      while child > 0 {
        let parent = (child - 1) / 2
        guard entries[child].isDue(before: entries[parent]) else { break }
        entries.swapAt(child, parent)
        child = parent
      }
    }

    mutating func popNext() -> Entry? {
      guard !entries.isEmpty else { return nil }
      entries.swapAt(0, entries.count - 1)
      let next = entries.removeLast()
      var parent = 0
      while true {
        let left = 2 * parent + 1
        let right = left + 1
        var first = parent
        if left < entries.count && entries[left].isDue(before: entries[first]) { first = left }
        if right < entries.count && entries[right].isDue(before: entries[first]) { first = right }
        guard first != parent else { return next }
        entries.swapAt(parent, first)
        parent = first
      }
    }

    /// Every entry, in no particular order, leaving the heap empty.
    mutating func takeAll() -> [Entry] {
      defer { entries = [] }
      return entries
    }
  }

  nonisolated(unsafe) private static var state = State()

  /// Runs `action` on the timer's thread once `delayNanoseconds` have passed; `action`
  /// should hand its work on (the queues dispatch their drain to their target), so that a
  /// slow action delays no other deadline. An action due at once (no delay) runs now, on the
  /// caller's thread: what it hands on then lands in order with whatever the caller does
  /// next, as `asyncAfter` with a deadline of now did.
  static func schedule(
    afterNanoseconds delayNanoseconds: Int, _ action: @escaping @Sendable () -> Void
  ) {
    guard delayNanoseconds > 0 else { return action() }
    let now = cdraintimer_now_ns()
    let (sum, overflow) = now.addingReportingOverflow(UInt64(max(0, delayNanoseconds)))
    let deadline = overflow ? .max : sum
    cdraintimer_lock()
    state.sequence &+= 1
    let scheduled = add(Entry(deadline: deadline, sequence: state.sequence, action: action))
    cdraintimer_unlock()
    if !scheduled { fallback(at: deadline, action) }
  }

  /// With the lock held: keeps `entry` and arms the timer when its deadline is the earliest;
  /// false when the timer cannot serve (nothing kept).
  private static func add(_ entry: Entry) -> Bool {
    var fresh: Int32 = 0
    let timer = cdraintimer_timer({ DrainTimer.fire(timer: $0) }, { DrainTimer.strand() }, &fresh)
    guard timer >= 0 else { return false }
    if fresh != 0 {
      // A new timer (the first use, or the first in a child of `fork()`): nothing is armed.
      state.armedFor = nil
      if let next = state.pending.next, cdraintimer_arm(timer, next.deadline) == 0 {
        state.armedFor = next.deadline
      }
    }
    if let armedFor = state.armedFor, armedFor <= entry.deadline {
      state.pending.push(entry)
      return true
    }
    guard cdraintimer_arm(timer, entry.deadline) == 0 else { return false }
    state.pending.push(entry)
    state.armedFor = entry.deadline
    return true
  }

  /// `timer` expired (on its thread): takes the actions due, arms the timer for the next
  /// deadline, and runs them without the lock.
  private static func fire(timer: Int32) {
    cdraintimer_lock()
    state.armedFor = nil
    let now = cdraintimer_now_ns()
    var due: [Entry] = []
    while let next = state.pending.next, next.deadline <= now {
      due.append(state.pending.popNext()!)
    }
    if let next = state.pending.next, cdraintimer_arm(timer, next.deadline) == 0 {
      state.armedFor = next.deadline
    }
    cdraintimer_unlock()
    for entry in due { entry.action() }
  }

  /// The timer can no longer be read (its descriptor was closed behind the queue's back):
  /// what waits goes to libdispatch, and so will what comes (arming the timer fails).
  private static func strand() {
    cdraintimer_lock()
    let stranded = state.pending.takeAll()
    state.armedFor = nil
    cdraintimer_unlock()
    for entry in stranded { fallback(at: entry.deadline, entry.action) }
  }

  /// `action` at `deadline` through libdispatch, where the timer cannot serve.
  private static func fallback(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) {
    let now = cdraintimer_now_ns()
    let wait = deadline > now ? deadline - now : 0
    DispatchQueue.global().asyncAfter(
      deadline: .now() + .nanoseconds(Int(min(wait, UInt64(Int.max))))
    ) { action() }
  }
}
