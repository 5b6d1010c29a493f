import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Counts the `deinit`s of every tracked object, one atomic counter per object.
///
/// Why per object rather than one total: "every object deinits exactly once" needs both
/// halves, none missing and none twice, and a total alone hides one of each.
final class DeinitLedger: @unchecked Sendable {
  // @unchecked: `counts` is only touched through atomics after `init`.
  let capacity: Int
  private let counts: UnsafeMutablePointer<Atomic<Int>>
  private let total = Atomic<Int>(0)

  init(capacity: Int) {
    self.capacity = capacity
    counts = .allocate(capacity: capacity)
    for index in 0..<capacity {
      (counts + index).initialize(to: Atomic(0))
    }
  }

  deinit {
    counts.deinitialize(count: capacity)
    counts.deallocate()
  }

  /// Called from a tracked object's `deinit`, on whatever thread released it.
  func recordDeinit(_ index: Int) {
    counts[index].add(1, ordering: .relaxed)
    total.add(1, ordering: .releasing)
  }

  /// All `deinit`s seen so far.
  var deinitCount: Int { total.load(ordering: .acquiring) }

  /// Waits until `expected` deinits were seen, running `nudge` (a drain) between looks.
  /// Returns false after `seconds`.
  func waitFor(_ expected: Int, seconds: Int, nudge: () -> Void) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
    while deinitCount < expected {
      if DispatchTime.now().uptimeNanoseconds > deadline { return false }
      nudge()
      usleep(1_000)
    }
    return true
  }

  /// How many objects never deinited and how many deinited more than once.
  func tally() -> (missing: Int, repeated: Int) {
    var missing = 0
    var repeated = 0
    for index in 0..<capacity {
      let count = counts[index].load(ordering: .acquiring)
      if count == 0 { missing += 1 }
      if count > 1 { repeated += 1 }
    }
    return (missing, repeated)
  }
}

/// An object whose `deinit` the ledger counts.
final class TrackedObject {
  let index: Int
  let ledger: DeinitLedger
  var payload = (0, 0, 0, 0)

  init(index: Int, ledger: DeinitLedger) {
    self.index = index
    self.ledger = ledger
  }

  deinit {
    ledger.recordDeinit(index)
  }
}
