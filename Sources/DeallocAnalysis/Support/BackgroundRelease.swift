import Foundation

/// Lets go of a large value on a thread of its own, as the dealloc queue this tool studies
/// lets go of a screen's objects: for state whose freeing (megabytes of tables, returned to
/// the system page by page) would otherwise hold up the thread that has more to do.
///
/// Why: a session that leaves many objects in its queues ends with tens of megabytes of
/// tables, and freeing them took about a millisecond on the analyzer's thread while the
/// reading thread waited for the report. The trade-off: the memory comes back a little later,
/// and a thread is started, so only large values are worth it.
///
/// `@unchecked Sendable`: the value is handed over whole. The caller keeps no other reference
/// to its storage that it changes (copies share storage copy-on-write, and reference counts
/// are atomic), and only the thread touches the box after ``start()``.
final class BackgroundRelease<Value>: @unchecked Sendable {
  private var value: Value?

  private init(_ value: consuming Value) {
    self.value = value
  }

  /// Hands `value` to a new thread, which drops it.
  static func release(_ value: consuming Value) {
    let box = BackgroundRelease(value)
    Thread { box.value = nil }.start()
  }
}
