import Foundation
import Testing

@testable import DeallocAnalysis

/// ``BackgroundRelease`` drops what it is handed on another thread: the value's last
/// reference goes there (its deinit runs there, once), not on the caller's thread.
@Suite struct BackgroundReleaseTests {
  private final class Watched: @unchecked Sendable {
    let released: DispatchSemaphore
    let releasedOn: UnsafeMutablePointer<pthread_t>

    init(_ released: DispatchSemaphore, _ releasedOn: UnsafeMutablePointer<pthread_t>) {
      self.released = released
      self.releasedOn = releasedOn
    }

    deinit {
      releasedOn.pointee = pthread_self()
      released.signal()
    }
  }

  @Test func theLastReferenceGoesOnAnotherThread() {
    let released = DispatchSemaphore(value: 0)
    let releasedOn = UnsafeMutablePointer<pthread_t>.allocate(capacity: 1)
    defer { releasedOn.deallocate() }
    releasedOn.initialize(to: pthread_self())
    // A value holding the only reference, as a session's state holds its tables, handed
    // over whole.
    let state = [Watched(released, releasedOn)]
    BackgroundRelease.release(consume state)
    // Generous: a bound on waiting, not a measure of speed.
    #expect(released.wait(timeout: .now() + 60) == .success)
    #expect(pthread_equal(releasedOn.pointee, pthread_self()) == 0)
  }
}
