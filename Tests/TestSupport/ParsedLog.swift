import Foundation
import XCTest

/// A trace log read line by line as JSON objects, apart from the project's `LogReader`: the
/// tests of the recorder check the wire itself (its keys and values), not what the reader
/// makes of it.
public struct ParsedLog {
  /// Every complete line, in order.
  public var records: [[String: Any]] = []
  /// Whether the last line was cut short (no newline); it is not among `records`.
  public var truncatedTail = false

  /// Reads `url`; a complete line that is not a JSON object fails the calling test.
  public init(contentsOf url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
    let data = try Data(contentsOf: url)
    let text = String(decoding: data, as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" {
      lines.removeLast()
    } else if !lines.isEmpty {
      truncatedTail = true
      lines.removeLast()
    }
    for (index, text) in lines.enumerated() {
      let object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
      guard let record = object as? [String: Any] else {
        XCTFail("\(url.path):\(index + 1): not a JSON object: \(text)", file: file, line: line)
        continue
      }
      records.append(record)
    }
  }

  public init(path: String, file: StaticString = #filePath, line: UInt = #line) throws {
    try self.init(contentsOf: URL(fileURLWithPath: path), file: file, line: line)
  }

  /// The records whose `ev` is `kind`, in order.
  public func kind(_ kind: String) -> [[String: Any]] {
    records.filter { $0["ev"] as? String == kind }
  }
}
