import CUnwind
import Foundation
import XCTest

@testable import DeallocTrace

/// The writer's flush bound holds even for a batch whose every stack is new, the one case
/// where formatting is slow (each new address is symbolized): it writes what it has
/// formatted every 40 ms instead of the whole batch at the end.
final class WriterFlushTests: XCTestCase {
  /// The bound: the log is flushed at least every 100 ms.
  private static let boundNanoseconds: UInt64 = 100_000_000

  func testABatchOfNewStacksReachesTheFileInPiecesNoFurtherApartThanTheBound() throws {
    let directory = try makeScratchDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("writer.jsonl").path
    let session = TraceSession(
      file: try LogFile.claim(path, pid: getpid()), frames: 64, pid: getpid(),
      generation: .max, firstID: 1)
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
      var event = TraceEvent(kind: .enqueue)
      event.objectID = UInt64(index + 1)
      event.hiddenAddress = HiddenAddress.hide(0x1000)
      event.metatype = unsafeBitCast(WriterFlushTests.self, to: UnsafeRawPointer.self)
      event.text = "flush"
      event.count = 1
      let accepted = frames.withUnsafeBufferPointer {
        session.buffer.push(event, frames: $0.baseAddress, frameCount: depth, mayWait: false)
      }
      XCTAssertTrue(accepted)
    }
    // Closed at once, so the writer takes the whole batch without waiting for more.
    session.buffer.close()
    let began = cunwind_monotonic_ns()
    LogWriter.spawn(for: session)
    var growths: [UInt64] = [began]
    var lastSize = 0
    while session.writerFinished.wait(timeout: .now() + .milliseconds(1)) == .timedOut {
      let size = fileSize(path)
      if size > lastSize {
        growths.append(cunwind_monotonic_ns())
        lastSize = size
      }
    }
    growths.append(cunwind_monotonic_ns())
    let gaps = zip(growths.dropFirst(), growths).map { ($0 - $1) / 1_000_000 }
    let total = (growths.last! - began) / 1_000_000
    print("writer: \(events) new stacks in \(total) ms, written in \(growths.count - 2) pieces")
    XCTAssertLessThan(
      gaps.max() ?? 0, Self.boundNanoseconds / 1_000_000,
      "ms between writes (first from the writer's start): \(gaps)")

    let parsed = try ParsedLog(contentsOf: URL(fileURLWithPath: path))
    XCTAssertFalse(parsed.truncatedTail)
    XCTAssertEqual(parsed.kind("stack").count, events)
    XCTAssertEqual(parsed.kind("enqueue").count, events)
    XCTAssertEqual(parsed.kind("end").first?["pending"] as? Int, events)
    let symbolized = parsed.kind("stack").flatMap { $0["frames"] as? [[String: Any]] ?? [] }
      .filter { ($0["mod"] as? String)?.hasSuffix("libFoundationEssentials.so") ?? false }
    XCTAssertEqual(symbolized.count, events * depth)
  }

  private func fileSize(_ path: String) -> Int {
    var status = stat()
    return stat(path, &status) == 0 ? Int(status.st_size) : 0
  }
}
