import Foundation
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
}
