import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Records which thread ran its `deinit`, and when.
final class Probe {
  let onDeinit: @Sendable (_ threadID: UInt) -> Void

  init(onDeinit: @escaping @Sendable (_ threadID: UInt) -> Void) {
    self.onDeinit = onDeinit
  }

  deinit {
    onDeinit(currentThreadID())
  }
}

func currentThreadID() -> UInt {
  UInt(pthread_self())
}

/// A thread-safe box for values observed in `deinit`s.
final class Observed<Value: Sendable>: Sendable {
  private let value: Mutex<Value>
  init(_ value: Value) { self.value = Mutex(value) }
  func update(_ body: @Sendable (inout Value) -> Void) { value.withLock { body(&$0) } }
  var current: Value { value.withLock { $0 } }
}
