import CQueueRuntime
import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// `Mutex` locks inside libswiftSynchronization, which is not instrumented, so under
/// `swift test --sanitize=thread` every access to the state it protects is reported as a
/// race. This wrapper restates the lock's happens-before edges with `__tsan_acquire` and
/// `__tsan_release`. Without the sanitizer those are two empty C calls per critical section,
/// about a nanosecond; the trade-off buys a concurrency suite that ThreadSanitizer can check.
package struct AnnotatedMutex<Value>: ~Copyable, @unchecked Sendable {
  // @unchecked: `Mutex` is what makes `Value` safe to share; this type only adds annotations.
  // Inlinable, so that other modules specialize `withLock` instead of calling a generic
  // function that looks up metadata on every lock (measured: a third of an enqueue).
  @usableFromInline let mutex: Mutex<Value>

  @inlinable
  package init(_ initialValue: consuming sending Value) {
    mutex = Mutex(initialValue)
  }

  /// Runs `body` with exclusive access to the protected value.
  @inlinable @inline(__always)
  package borrowing func withLock<Result, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
      let token = withUnsafePointer(to: mutex) { UnsafeMutableRawPointer(mutating: $0) }
      csanitizer_acquire(token)
      defer { csanitizer_release(token) }
      return try body(&value)
    }
  }
}
