import Foundation
import TextEscaping
import XCTest

@testable import DeallocAnalysis
@testable import DeallocLog

/// The byte-level JSON writer of the Perfetto export: exact microseconds, addresses as the log
/// writes them, strings escaped like every other JSON output of the tools.
final class TraceEventWriterTests: XCTestCase {
  private func event(_ body: (inout TraceEventWriter) -> Void) -> String {
    var writer = TraceEventWriter(capacity: 256)
    writer.begin(UInt8(ascii: "i"))
    body(&writer)
    writer.end()
    return String(decoding: writer.bytes, as: UTF8.self)
  }

  func testMicrosecondsAreExact() {
    let cases: [(Int64, String)] = [
      (0, "0"), (1, "0.001"), (1_200, "1.2"), (1_234_567, "1234.567"), (5_000_000, "5000"),
      (-2_500, "-2.5"), (10, "0.01"),
    ]
    for (nanoseconds, expected) in cases {
      XCTAssertEqual(
        event { $0.microseconds("ts", nanoseconds) }, "{\"ph\":\"i\",\"ts\":\(expected)}")
    }
  }

  func testAddressesAndIntegers() {
    XCTAssertEqual(
      event {
        $0.address("obj", Address(0x7f3a_0000_1230))
        $0.address("zero", Address(0))
        $0.int("n", -1_234_567_890_123)
      },
      "{\"ph\":\"i\",\"obj\":\"0x7f3a00001230\",\"zero\":\"0x0\",\"n\":-1234567890123}")
  }

  func testStringsMatchTheSharedJSONQuoting() throws {
    let hostile = "a\"b\\c\nd\re\tf\u{1}g\u{2028}h\u{2029}i é😀 <script>&"
    let written = event { $0.string("name", hostile) }
    XCTAssertEqual(written, "{\"ph\":\"i\",\"name\":\(Escaping.json(hostile))}")
    let parsed = try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any]
    XCTAssertEqual(parsed?["name"] as? String, hostile)
    XCTAssertEqual(
      event { $0.string("name", prefix: "late dealloc: ", "A<\"B\">") },
      "{\"ph\":\"i\",\"name\":\"late dealloc: A<\\\"B\\\">\"}")
  }

  func testArgsAndNestedObjectsPlaceTheirCommas() {
    XCTAssertEqual(
      event {
        $0.int("pid", 1)
        $0.beginArgs()
        $0.bool("freed", false)
        $0.int("rc", 2)
        $0.endArgs()
      },
      "{\"ph\":\"i\",\"pid\":1,\"args\":{\"freed\":false,\"rc\":2}}")
  }
}
