import XCTest

@testable import DeallocTrace

/// Every traced enqueue copies a whole `TraceEvent` into the buffer, so a rare kind with a
/// large payload (a holder scan's answer) must not make every event larger.
final class EventLayoutTests: XCTestCase {
  func testTheEnqueueIsTheLargestPayload() {
    XCTAssertLessThanOrEqual(
      MemoryLayout<TraceEvent.Payload>.size, MemoryLayout<TraceEvent.Enqueue>.size + 1)
    XCTAssertGreaterThan(
      MemoryLayout<TraceEvent.HolderScan>.size, MemoryLayout<TraceEvent.Enqueue>.size,
      "the holder scan's case is indirect because its payload is the larger one")
  }
}
