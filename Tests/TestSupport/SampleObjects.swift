import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// Objects the queue's and the leak assertions' tests let go of, shared with the timing tests
// (a target of their own) so that each is written once.

/// Records which thread ran its `deinit`.
public final class Probe {
  let onDeinit: @Sendable (_ threadID: UInt) -> Void

  public init(onDeinit: @escaping @Sendable (_ threadID: UInt) -> Void) {
    self.onDeinit = onDeinit
  }

  deinit {
    onDeinit(currentThreadID())
  }
}

public func currentThreadID() -> UInt {
  UInt(pthread_self())
}

/// A process-wide cache that forgets nothing: whatever it holds survives its release.
public enum ForgetfulCache {
  private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

  public static func insert(_ object: AnyObject) {
    entries.withLock { $0[ObjectIdentifier(object)] = Entry(object: object) }
  }

  public static func remove(_ object: AnyObject) {
    remove(id: ObjectIdentifier(object))
  }

  public static func remove(id: ObjectIdentifier) {
    // Released outside the lock: a deinit must not run under it.
    let removed = entries.withLock { $0.removeValue(forKey: id) }
    _ = removed
  }

  /// `@unchecked Sendable`: the cache only keeps its objects alive, it never uses them.
  private struct Entry: @unchecked Sendable {
    let object: AnyObject
  }
}

/// A flag set from a `deinit` on whatever thread runs it.
public final class Flag: Sendable {
  private let value = Mutex(false)
  public init() {}
  public func set() { value.withLock { $0 = true } }
  public var isSet: Bool { value.withLock { $0 } }
}
