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
    var records: [[String: Any]] = []
    truncatedTail = try Self.forEachRecord(in: url, file: file, line: line) {
      records.append($0)
    }
    self.records = records
  }

  public init(path: String, file: StaticString = #filePath, line: UInt = #line) throws {
    try self.init(contentsOf: URL(fileURLWithPath: path), file: file, line: line)
  }

  /// The records whose `ev` is `kind`, in order.
  public func kind(_ kind: String) -> [[String: Any]] {
    records.filter { $0["ev"] as? String == kind }
  }

  /// Hands every complete line of `url`, as a JSON object, to `body` in order, keeping none:
  /// a stress log of millions of records would not fit in memory as `records`. A complete
  /// line that is not a JSON object fails the calling test. Returns whether the last line was
  /// cut short (no newline); `body` does not see it.
  @discardableResult
  public static func forEachRecord(
    in url: URL, file: StaticString = #filePath, line: UInt = #line,
    _ body: ([String: Any]) throws -> Void
  ) throws -> Bool {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    var pending: [UInt8] = []
    var lineNumber = 0
    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
      pending.append(contentsOf: chunk)
      var start = 0
      while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
        lineNumber += 1
        let text = String(decoding: pending[start..<newline], as: UTF8.self)
        let object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        if let record = object as? [String: Any] {
          try body(record)
        } else {
          XCTFail(
            "\(url.path):\(lineNumber): not a JSON object: \(text)", file: file, line: line)
        }
        start = newline + 1
      }
      pending.removeFirst(start)
    }
    return !pending.isEmpty
  }
}
