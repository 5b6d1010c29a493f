import Glibc

/// A pthread mutex with two condition variables on the monotonic clock.
///
/// The event buffer needs what `Synchronization.Mutex` lacks: waiting for a condition
/// (room for producers, data for the writer) with a timeout, so the writer also wakes on
/// its flush interval when nothing arrives.
final class Monitor: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let conditions: UnsafeMutablePointer<pthread_cond_t>

  /// The condition the writer waits on.
  static let data = 0
  /// The condition producers wait on.
  static let room = 1

  init() {
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    conditions = .allocate(capacity: 2)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(conditions, &attributes)
    pthread_cond_init(conditions + 1, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(conditions)
    pthread_cond_destroy(conditions + 1)
    conditions.deallocate()
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func lock() { pthread_mutex_lock(mutex) }
  func unlock() { pthread_mutex_unlock(mutex) }

  /// Waits on `condition` (the mutex held) for at most `nanoseconds`.
  func wait(_ condition: Int, nanoseconds: UInt64) {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let total = UInt64(now.tv_nsec) + nanoseconds
    var deadline = timespec()
    deadline.tv_sec = now.tv_sec + Int(total / 1_000_000_000)
    deadline.tv_nsec = Int(total % 1_000_000_000)
    pthread_cond_timedwait(conditions + condition, mutex, &deadline)
  }

  func signal(_ condition: Int) { pthread_cond_signal(conditions + condition) }
  func broadcast(_ condition: Int) { pthread_cond_broadcast(conditions + condition) }
}
