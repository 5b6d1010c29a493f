import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// A downsampled timeline still ends at the depth the queue really ended at: a burst that
/// fills and drains inside the last time bucket must not leave the line at its peak.
final class TimelineEndDepthTests: XCTestCase {
  func testBurstDrainedInTheLastBucketEndsAtZero() throws {
    var lines = [
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/app/Burst","delay_ms":100,"frames":0}"#
    ]
    var id = 0
    // 1,500 objects that each wait 0.5 ms: 3,000 depth changes, so the series is compacted.
    for n in 0..<1_500 {
      id += 1
      let t = Int64(n) * 1_000_000 + 1_000
      lines.append(
        #"{"ev":"enqueue","t":\#(t),"id":\#(id),"obj":"0x1000","type":"A","q":"q","tid":1,"depth":1}"#
      )
      lines.append(#"{"ev":"release","t":\#(t + 500_000),"id":\#(id),"tid":2,"freed":true}"#)
    }
    // Then a burst of 500 that is drained 10 µs later, and a quiet second before the end.
    let burst: Int64 = 1_500_000_000
    for n in 0..<500 {
      lines.append(
        #"{"ev":"enqueue","t":\#(burst + Int64(n)),"id":\#(id + n + 1),"obj":"0x\#(String(0x2000 + n, radix: 16))","type":"B","q":"q","tid":1,"depth":\#(n + 1)}"#
      )
    }
    for n in 0..<500 {
      lines.append(
        #"{"ev":"release","t":\#(burst + 10_000 + Int64(n)),"id":\#(id + n + 1),"tid":2,"freed":true}"#
      )
    }
    lines.append(#"{"ev":"end","t":\#(burst + 1_000_000_000),"why":"exit","pending":0,"lost":0}"#)
    let log = try scratchDirectory("visual").url.appendingPathComponent("burst.jsonl")
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: log)

    let report = try DeallocAnalysis.analyze([log.path])
    XCTAssertEqual(report.sessions[0].queues[0].peakDepth, 500)
    let page = try XMLDocumentScan(HTMLRenderer().render(report))
    let path = try XCTUnwrap(page.all("path", classes: ["depth"]).first?.attributes["d"])
    // The path closes with "V<last depth>H<end>V<baseline>Z": the last depth must be 0.
    let parts = path.split(separator: "V").suffix(2)
    let lastDepth = try XCTUnwrap(parts.first.map { String($0.split(separator: "H")[0]) })
    let baseline = try XCTUnwrap(parts.last.map { String($0.dropLast()) })
    XCTAssertEqual(
      lastDepth, baseline, "the line ends at depth 0, not at the burst's peak: \(path.suffix(80))")
  }
}
