import Foundation
import TestSupport
import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// A `holders` record's optional `allocStack` (DEALLOCTRACE_ALLOC_STACKS): read by both
/// parsers onto the holder report, and shown under its paths as "allocated at:" with the
/// program's frames first; a record without it reads as before.
@Suite struct HolderAllocationStackTests {
  static let record =
    #"{"ev":"holders","t":9,"id":3,"obj":"0x2000","type":"Shop.Order","why":"release","allocStack":[{"ip":"0x7f0000001000","mod":"/usr/lib/swift/linux/libswiftCore.so","off":"0x1000","sym":"swift_allocObject"},{"ip":"0x5100","mod":"/app/Shop","off":"0x5100","sym":"Shop.checkout() -> ()"}],"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"Shop.Order","obj":"0x2000","off":16,"field":"me"}]}],"scan_us":5}"#

  private func holders(_ line: String, general: Bool) throws -> HolderRecord? {
    var parser = RecordParser()
    let record = try Array(line.utf8).withUnsafeBufferPointer {
      general ? try parser.parseAnyShape($0) : try parser.parse($0)
    }
    guard case .holders(let holders) = record else { return nil }
    return holders
  }

  @Test(arguments: [false, true]) func theStackIsReadAndShown(general: Bool) throws {
    let record = try #require(try holders(Self.record, general: general))
    #expect(
      record.holders.allocationStack.map(\.symbol) == [
        "swift_allocObject", "Shop.checkout() -> ()",
      ])
    let lines = HolderPathText.lines(record.holders, type: record.type, address: record.object)
    let heading = try #require(lines.firstIndex(of: "allocated at:"), "\(lines)")
    #expect(lines[heading + 1] == "  Shop.checkout() -> ()", "\(lines)")
  }

  @Test(arguments: [false, true]) func aRecordWithoutItReadsAsBefore(general: Bool) throws {
    let plain = Self.record.replacingOccurrences(of: #""allocStack""#, with: #""x""#)
    let record = try #require(try holders(plain, general: general))
    #expect(record.holders.allocationStack.isEmpty)
    let lines = HolderPathText.lines(record.holders, type: record.type, address: record.object)
    #expect(!lines.contains { $0.contains("allocated at") }, "\(lines)")
  }

  /// A survivor of its release, with holders and an allocation stack.
  static let survivorLog =
    [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/app/Shop","delay_ms":100,"frames":32,"holders":true}"#,
      #"{"ev":"enqueue","t":1,"id":3,"obj":"0x2000","type":"Shop.Order","q":"shared","tid":7,"depth":1,"rc":1}"#,
      #"{"ev":"drain","t":2,"q":"shared","n":1,"tid":8,"why":"timer"}"#,
      #"{"ev":"release","t":3,"id":3,"tid":8,"freed":false,"rc":2}"#,
      record,
      #"{"ev":"end","t":10,"why":"exit","pending":0,"lost":0}"#,
    ].joined(separator: "\n") + "\n"

  /// Gives every frame of `/app/Shop` a file and line.
  struct ShopSymbolizer: FrameSymbolizer {
    var problems: [String] { [] }
    func symbolize(_ frames: [Frame]) -> [Frame] {
      frames.map { frame in
        var frame = frame
        if frame.module == "/app/Shop" {
          frame.file = "/src/Shop/Checkout.swift"
          frame.line = 42
        }
        return frame
      }
    }
  }

  @Test func symbolizeGivesTheStackFileAndLineAndTheJSONReportCarriesIt() throws {
    let scratch = try ScratchDirectory("holder-alloc-stack")
    let path = scratch.url.appendingPathComponent("shop.jsonl").path
    try Self.survivorLog.write(toFile: path, atomically: true, encoding: .utf8)

    let report = try DeallocAnalysis.analyze([path], symbolizer: ShopSymbolizer())
    let holders = try #require(report.findings.first?.holders, "\(report.findings)")
    let program = try #require(holders.allocationStack.last)
    #expect(program.file == "/src/Shop/Checkout.swift" && program.line == 42)

    let text = TextRenderer().render(report)
    #expect(text.contains("Checkout.swift:42"), "\(text)")
    let json = JSONRenderer().render(report)
    #expect(json.contains(#""allocStack""#), "\(json)")
    #expect(json.contains("/src/Shop/Checkout.swift"), "\(json)")

    // Without allocation stacks, the holders value keeps its shape.
    let plain = Self.survivorLog.replacingOccurrences(of: #""allocStack""#, with: #""x""#)
    try plain.write(toFile: path, atomically: true, encoding: .utf8)
    #expect(!JSONRenderer().render(try DeallocAnalysis.analyze([path])).contains("allocStack"))
  }
}
