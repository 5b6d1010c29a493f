import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// How long a test waits for a step of another thread before it fails: far longer than any
/// step takes on a loaded 2-core machine, short enough that a lost signal fails its test with
/// a message instead of hanging the run. A bound, never a measurement.
public let testWaitBound: DispatchTimeInterval = .seconds(testWaitBoundSeconds)
private let testWaitBoundSeconds = 60

/// `testWaitBound` from now, for the waits that take a date.
public var testWaitDeadline: Date { Date(timeIntervalSinceNow: TimeInterval(testWaitBoundSeconds)) }

/// A wait of a test that reached `testWaitBound`; thrown, it fails the test that waited.
public struct TestWaitTimedOut: Error, CustomStringConvertible {
  public var what: String
  public init(what: String) { self.what = what }
  public var description: String { "gave up after \(testWaitBound) waiting for \(what)" }
}

extension DispatchSemaphore {
  /// Waits for `what` at most `testWaitBound`; a timeout throws `TestWaitTimedOut`.
  public func wait(for what: String) throws {
    if wait(timeout: .now() + testWaitBound) == .timedOut { throw TestWaitTimedOut(what: what) }
  }
}

/// Polls `condition` until it holds, at most `testWaitBound`; a timeout throws
/// `TestWaitTimedOut` naming `what`. For states nothing signals (a queue's pending count).
public func waitUntil(_ what: String, _ condition: () -> Bool) throws {
  let deadline = DispatchTime.now() + testWaitBound
  while !condition() {
    if DispatchTime.now() >= deadline { throw TestWaitTimedOut(what: what) }
    usleep(1_000)
  }
}
