import CUnwind
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The cached-rule walk (`cunwind_fast_backtrace`) against libunwind's `unw_backtrace` on the
/// same stacks: every frame from the caller out must be the same, to the outermost one, on
/// the test's thread, on a thread of its own, through the runtime's and Foundation's frames,
/// and twice (the second walk reads every rule from the cache). A signal frame is the one
/// shape the walk hands to libunwind.
@Suite struct FastUnwinderTests {
  /// Both walks from one Swift frame. Their first frames are that frame's two call sites;
  /// libunwind may add the frame of `cunwind_libunwind_backtrace` in between.
  @inline(never)
  static func bothWalks() -> (fast: [UInt], libunwind: [UInt], fastResult: Int32) {
    var fast = [UnsafeMutableRawPointer?](repeating: nil, count: 512)
    var reference = [UnsafeMutableRawPointer?](repeating: nil, count: 512)
    let fastCount = cunwind_fast_backtrace(&fast, Int32(fast.count))
    let referenceCount = cunwind_libunwind_backtrace(&reference, Int32(reference.count))
    let addresses = { (frames: [UnsafeMutableRawPointer?], count: Int32) in
      frames.prefix(Int(max(count, 0))).map { UInt(bitPattern: $0) }
    }
    return (addresses(fast, fastCount), addresses(reference, referenceCount), fastCount)
  }

  /// Calls `body` from `depth` more frames of this module's code.
  @inline(never)
  static func deeper<T>(_ depth: Int, _ body: () -> T) -> T {
    let result = depth == 0 ? body() : deeper(depth - 1, body)
    _ = getpid()  // not a tail call: each level keeps its frame
    return result
  }

  /// Asserts that the walks agree on every frame above the calling one, to the end.
  static func expectSameFrames(
    _ walks: (fast: [UInt], libunwind: [UInt], fastResult: Int32),
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let (fast, reference, result) = walks
    #expect(result > 0, "the cached-rule walk gave up", sourceLocation: sourceLocation)
    #expect(fast.count < 512, "the walk did not reach the outermost frame")
    let extra = reference.count - fast.count
    #expect(extra == 0 || extra == 1, "fast \(fast.count) frames, libunwind \(reference.count)")
    let common = fast.count - 1
    #expect(
      Array(fast.suffix(common)) == Array(reference.suffix(common)),
      """
      frames differ:
      fast \(fast.map { String($0, radix: 16) })
      libunwind \(reference.map { String($0, radix: 16) })
      """,
      sourceLocation: sourceLocation)
  }

  init() {
    #expect(cunwind_load_unwinder() == 1)
  }

  @Test func theWalkMatchesLibunwindOnTheTestsThread() {
    let first = Self.deeper(40) { Self.bothWalks() }
    Self.expectSameFrames(first)
    // The same return addresses again: every rule now comes from the cache.
    Self.expectSameFrames(Self.deeper(40) { Self.bothWalks() })
    #expect(first.fast.count > 40)
  }

  /// One frame that calls `bothWalks`, so that two calls of it from two lines of one caller
  /// give walks whose inner frames are the same (stack pointers, registers and return
  /// addresses) and whose caller's return address is not.
  @inline(never)
  static func walksFromASharedFrame() -> (fast: [UInt], libunwind: [UInt], fastResult: Int32) {
    bothWalks()
  }

  @Test func aWalkThatSharesInnerFramesButNotItsCallerIsNotCopiedFromTheLastOne() {
    // The thread's last walk is kept; the second walk meets its frames again at the same
    // stack addresses, and only the caller's return address tells them apart.
    let fromTheFirstLine = Self.walksFromASharedFrame()
    let fromTheSecondLine = Self.walksFromASharedFrame()
    Self.expectSameFrames(fromTheFirstLine)
    Self.expectSameFrames(fromTheSecondLine)
    #expect(fromTheFirstLine.fast.count > 2 && fromTheSecondLine.fast.count > 2)
    #expect(fromTheFirstLine.fast.prefix(2) == fromTheSecondLine.fast.prefix(2))
    #expect(fromTheFirstLine.fast.dropFirst(2).first != fromTheSecondLine.fast.dropFirst(2).first)
  }

  @Test func theWalkMatchesLibunwindThroughTheRuntimesFrames() {
    // Frames of libswiftCore (`map`'s closure call) and Foundation (a sort's comparator)
    // between the test and the walk.
    let walks = [3, 1, 2].map { depth in Self.deeper(depth) { Self.bothWalks() } }
    for walk in walks { Self.expectSameFrames(walk) }
    var sorted: [(fast: [UInt], libunwind: [UInt], fastResult: Int32)] = []
    let array = NSMutableArray(array: [3, 1, 2])
    array.sort { left, right in
      sorted.append(Self.bothWalks())
      return (left as! Int) < (right as! Int) ? .orderedAscending : .orderedDescending
    }
    #expect(!sorted.isEmpty)
    for walk in sorted { Self.expectSameFrames(walk) }
  }

  @Test func theWalkMatchesLibunwindOnAThreadToItsStart() {
    nonisolated(unsafe) var walks: (fast: [UInt], libunwind: [UInt], fastResult: Int32)?
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      walks = Self.deeper(10) { Self.bothWalks() }
      done.signal()
    }
    thread.start()
    #expect(done.wait(timeout: .now() + 60) == .success)
    guard let walks else { return }
    Self.expectSameFrames(walks)
  }

  @Test func aSignalFrameIsLeftToLibunwind() throws {
    signalWalks.reset()
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 256)
      signalWalks.fastResult = cunwind_fast_backtrace(&frames, 256)
      signalWalks.combined = Int(cunwind_backtrace(&frames, 256))
      signalWalks.reference = Int(cunwind_libunwind_backtrace(&frames, 256))
    }
    var previous = sigaction()
    #expect(sigaction(SIGUSR2, &action, &previous) == 0)
    defer { sigaction(SIGUSR2, &previous, nil) }
    // The test's thread may block the signal; `raise` runs the handler before it returns
    // only while it is unblocked.
    var signals = sigset_t()
    var blocked = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGUSR2)
    #expect(pthread_sigmask(SIG_UNBLOCK, &signals, &blocked) == 0)
    defer { pthread_sigmask(SIG_SETMASK, &blocked, nil) }
    raise(SIGUSR2)
    #expect(signalWalks.fastResult == -1, "the walk must not step through a signal frame")
    // Through the signal frame to the test's own frames: libunwind's walk, whole (one frame
    // more: cunwind_backtrace's own).
    #expect(signalWalks.combined > 10)
    #expect(signalWalks.combined - signalWalks.reference == 1)
  }
}

/// What the signal handler saw (a C handler captures nothing).
private nonisolated(unsafe) var signalWalks = SignalWalks()

private struct SignalWalks {
  var fastResult: Int32 = 0
  var combined = 0
  var reference = 0
  mutating func reset() { self = SignalWalks() }
}
