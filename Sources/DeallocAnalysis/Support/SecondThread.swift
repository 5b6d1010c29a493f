import Foundation

/// Work run on a thread of its own while the caller goes on, joined with ``finish()``: for
/// the ends of a report (a session's last findings, the JSON document's second half), where
/// the reading thread has stopped and a core is free.
///
/// `@unchecked Sendable`, and `work` need not be `@Sendable`: the caller hands what `work`
/// captures over to the thread and must not change it until ``finish()`` returns (reading
/// shared immutable values, such as a report, is fine). The result is written by the thread
/// before it signals, and read only after waiting.
final class SecondThread<Result>: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var work: (() -> Result)?
  private var result: Result?

  init(_ work: @escaping () -> Result) {
    self.work = work
    Thread { [self] in
      result = self.work!()
      self.work = nil
      done.signal()
    }.start()
  }

  /// Waits for the thread; what `work` returned, handed over rather than kept (so call it
  /// once): the `Thread` that ran `work` holds this object until it exits, and a result still
  /// held here (a JSON writer) would make the caller's next append copy its buffer.
  func finish() -> Result {
    done.wait()
    defer { result = nil }
    return result!
  }
}
