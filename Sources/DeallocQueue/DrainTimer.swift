import CDrainTimer
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
/// handled in C (`CDrainTimer`), so that a process can fork beside the thread. Where no
/// timer or thread can be had (not Linux, no descriptor left) an action falls back to
/// `asyncAfter`.
enum DrainTimer {
  private struct Entry {
    var deadline: UInt64
    var action: @Sendable () -> Void
  }

  /// Guarded by the C side's lock (`cdraintimer_lock`), which the fork handlers also take.
  private struct State {
    /// Latest deadline first, so that the next one due is the last; of equal deadlines the
    /// one that came first sits later.
    var pending: [Entry] = []
    /// The deadline the timer is armed for, while it is.
    var armedFor: UInt64?
  }

  nonisolated(unsafe) private static var state = State()

  /// Runs `action` on the timer's thread once `delayNanoseconds` have passed; `action`
  /// should hand its work on (the queues dispatch their drain to their target), so that a
  /// slow action delays no other deadline.
  static func schedule(
    afterNanoseconds delayNanoseconds: Int, _ action: @escaping @Sendable () -> Void
  ) {
    let now = cdraintimer_now_ns()
    let (sum, overflow) = now.addingReportingOverflow(UInt64(max(0, delayNanoseconds)))
    let deadline = overflow ? .max : sum
    cdraintimer_lock()
    let scheduled = add(Entry(deadline: deadline, action: action))
    cdraintimer_unlock()
    if !scheduled { fallback(at: deadline, action) }
  }

  /// With the lock held: keeps `entry` and arms the timer when its deadline is the earliest;
  /// false when the timer cannot serve (nothing kept).
  private static func add(_ entry: Entry) -> Bool {
    var fresh: Int32 = 0
    let timer = cdraintimer_timer({ DrainTimer.fire() }, { DrainTimer.strand() }, &fresh)
    guard timer >= 0 else { return false }
    if fresh != 0 {
      // A new timer (the first use, or the first in a child of `fork()`): nothing is armed.
      state.armedFor = nil
      if let next = state.pending.last, cdraintimer_arm(timer, next.deadline) == 0 {
        state.armedFor = next.deadline
      }
    }
    let index = state.pending.partitioningIndex { $0.deadline > entry.deadline }
    state.pending.insert(entry, at: index)
    if let armedFor = state.armedFor, armedFor <= entry.deadline { return true }
    guard cdraintimer_arm(timer, entry.deadline) == 0 else {
      state.pending.remove(at: index)
      return false
    }
    state.armedFor = entry.deadline
    return true
  }

  /// The timer expired (on the timer's thread): takes the actions due, arms the timer for
  /// the next deadline, and runs them without the lock.
  private static func fire() {
    cdraintimer_lock()
    state.armedFor = nil
    let now = cdraintimer_now_ns()
    var due: [Entry] = []
    while let next = state.pending.last, next.deadline <= now {
      due.append(state.pending.removeLast())
    }
    var fresh: Int32 = 0
    let timer = cdraintimer_timer({ DrainTimer.fire() }, { DrainTimer.strand() }, &fresh)
    if let next = state.pending.last, timer >= 0, cdraintimer_arm(timer, next.deadline) == 0 {
      state.armedFor = next.deadline
    }
    cdraintimer_unlock()
    for entry in due { entry.action() }
  }

  /// The timer can no longer be read (its descriptor was closed behind the queue's back):
  /// what waits goes to libdispatch, and so will what comes (arming the timer fails).
  private static func strand() {
    cdraintimer_lock()
    let stranded = state.pending
    state.pending = []
    state.armedFor = nil
    cdraintimer_unlock()
    for entry in stranded.reversed() { fallback(at: entry.deadline, entry.action) }
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

extension Array {
  /// The first index whose element does not satisfy `belongsBefore`, for an array in which
  /// every element that satisfies it comes before every one that does not.
  fileprivate func partitioningIndex(where belongsBefore: (Element) -> Bool) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = low + (high - low) / 2
      if belongsBefore(self[middle]) { low = middle + 1 } else { high = middle }
    }
    return low
  }
}
