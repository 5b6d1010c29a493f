import Dispatch
import Foundation
import Synchronization
import TestSupport
import XCTest

@testable import DeallocTrace

/// The writer's flush bound holds even for a batch whose every stack is new, the one case
/// where formatting is slow (each new address is symbolized): it writes what it has
/// formatted every `formattingBudgetNanoseconds` instead of the whole batch at the end.
///
/// The writer runs on a simulated clock (`WriterClock`): its wait for events takes the full
/// flush interval, the worst case, and each look at the clock after a new stack finds one
/// `step` more, so the test checks the writer's rule, not how fast this machine is.
final class WriterFlushTests: XCTestCase {
  /// The bound: the log is flushed at least every 100 ms.
  private static let boundNanoseconds: UInt64 = 100_000_000
  /// What symbolizing one new stack costs on the simulated clock: milliseconds, as when a
  /// stack's first address in a large library reads its symbol tables.
  private static let step: UInt64 = 5_000_000

  func testABatchOfNewStacksReachesTheFileInPiecesNoFurtherApartThanTheBound() throws {
    let directory = try ScratchDirectory("trace").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("writer.jsonl").path
    let session = TraceSession(
      file: try LogFile.claim(path, pid: getpid()), frames: 64, pid: getpid(),
      generation: .max, firstID: 1)
    let clock = SimulatedClock(path: path, step: Self.step)
    XCTAssertEqual(LogWriter.spawn(for: session, clock: clock.writerClock), 0)
    // The records arrive just after the writer began to wait: they wait the longest.
    XCTAssertEqual(clock.waiting.wait(timeout: .now() + .seconds(30)), .success)
    let arrival = clock.time

    // 64,000 distinct return addresses inside a large Swift library's code.
    let anchor = try XCTUnwrap(
      dlsym(nil, "$s20FoundationEssentials4DataVMa"), "FoundationEssentials is not loaded")
    let start = UInt(bitPattern: anchor)
    let events = 1000
    let depth = 64
    var frames = [UInt](repeating: 0, count: depth)
    for index in 0..<events {
      for level in 0..<depth {
        frames[level] = start + UInt((index * depth + level) * 16) + 1
      }
      let enqueue = TraceEvent.Enqueue(
        objectID: UInt64(index + 1), hiddenAddress: HiddenAddress.hide(0x1000),
        metatype: unsafeBitCast(WriterFlushTests.self, to: UnsafeRawPointer.self),
        queue: "flush", depth: 1, retainCount: 0)
      let event = TraceEvent(time: 0, .enqueue(enqueue))
      let accepted = frames.withUnsafeBufferPointer {
        session.buffer.push(event, frames: $0.baseAddress, frameCount: depth, mayWait: false)
      }
      XCTAssertTrue(accepted)
    }
    // Closed at once, so the writer takes the whole batch in one go.
    session.buffer.close()
    clock.proceed.signal()
    XCTAssertEqual(session.writerFinished.wait(timeout: .now() + .seconds(60)), .success)
    clock.sample()  // the last piece and `end`, written after the writer's last look

    XCTAssertEqual(clock.waits, [LogWriter.flushIntervalNanoseconds])
    let writes = clock.writeTimes
    let gaps = zip(writes, [arrival] + writes).map { ($0 - $1) / 1_000_000 }
    print(
      "writer: \(events) new stacks in \(writes.count) pieces, simulated ms apart: first "
        + "\(gaps.first ?? 0), largest \(gaps.max() ?? 0)")
    XCTAssertGreaterThan(writes.count, 2, "written in \(writes.count) pieces")
    XCTAssertLessThan(
      gaps.max() ?? 0, Self.boundNanoseconds / 1_000_000,
      "simulated ms between writes (the first from the records' arrival): \(gaps)")

    let parsed = try ParsedLog(contentsOf: URL(fileURLWithPath: path))
    XCTAssertFalse(parsed.truncatedTail)
    XCTAssertEqual(parsed.kind("stack").count, events)
    XCTAssertEqual(parsed.kind("enqueue").count, events)
    XCTAssertEqual(parsed.kind("end").first?["pending"] as? Int, events)
    let symbolized = parsed.kind("stack").flatMap { $0["frames"] as? [[String: Any]] ?? [] }
      .filter { ($0["mod"] as? String)?.hasSuffix("libFoundationEssentials.so") ?? false }
    XCTAssertEqual(symbolized.count, events * depth)
  }
}

/// A writer clock that moves only when the writer looks at it or waits, and notes the log's
/// size at each of those moments: what was written since the last look was written by then.
private final class SimulatedClock: Sendable {
  private struct State {
    var time: UInt64 = 1_000_000_000
    var samples: [(time: UInt64, size: Int)] = []
    var waits: [UInt64] = []
  }

  private let path: String
  private let step: UInt64
  private let state = Mutex(State())
  /// Signalled when the writer first waits for events; it carries on after `proceed`.
  let waiting = DispatchSemaphore(value: 0)
  let proceed = DispatchSemaphore(value: 0)

  init(path: String, step: UInt64) {
    self.path = path
    self.step = step
  }

  var writerClock: WriterClock {
    WriterClock(
      now: { [self] in
        state.withLock { state in
          state.samples.append((state.time, fileSize()))
          defer { state.time += step }  // the next look follows one more new stack
          return state.time
        }
      },
      take: { [self] buffer, batch, frames, nanoseconds in
        let first = state.withLock { state in
          state.samples.append((state.time, fileSize()))
          state.waits.append(nanoseconds)
          return state.waits.count == 1
        }
        if first {
          waiting.signal()
          _ = proceed.wait(timeout: .now() + testWaitBound)
        }
        // Nothing wakes it early: the wait lasts as long as the writer allows.
        state.withLock { $0.time += nanoseconds }
        return buffer.take(into: &batch, frames: &frames, waitingAtMost: 0)
      })
  }

  var time: UInt64 { state.withLock { $0.time } }
  var waits: [UInt64] { state.withLock { $0.waits } }

  /// Notes the log's size now.
  func sample() {
    state.withLock { state in state.samples.append((state.time, fileSize())) }
  }

  /// The simulated times by which the log had grown: one per piece the writer wrote.
  var writeTimes: [UInt64] {
    state.withLock { state in
      var times: [UInt64] = []
      var size = state.samples.first?.size ?? 0
      for sample in state.samples where sample.size > size {
        times.append(sample.time)
        size = sample.size
      }
      return times
    }
  }

  private func fileSize() -> Int {
    var status = stat()
    return stat(path, &status) == 0 ? Int(status.st_size) : 0
  }
}
