import Synchronization

/// A value set on one thread and read on another (a `deinit`'s or a timer's observation).
public final class Observed<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>
  public init(_ value: Value) { storage = Mutex(value) }
  public func update(_ body: @Sendable (inout Value) -> Void) { storage.withLock { body(&$0) } }
  public func set(_ value: Value) { storage.withLock { $0 = value } }
  public var value: Value { storage.withLock { $0 } }
}
