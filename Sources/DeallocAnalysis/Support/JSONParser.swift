/// Parses a whole JSON document (a baseline, a saved report) into a ``JSONValue``, with the
/// line of the first error.
///
/// Why not `JSONSerialization`: its errors do not reliably name a line, and a person fixing
/// a hand-edited baseline after a merge conflict needs one; `Any` values would also need a
/// cast at every step. Why not the log's `JSONScanner`: it reads only the flat shapes of log
/// records, for speed. The trade-off is one more small parser; it nests at most
/// ``maximumDepth`` levels, so hostile input cannot exhaust the stack.
struct JSONParser {
  /// Why a document is not JSON, and on which 1-based line.
  struct Failure: Error, Equatable {
    var line: Int
    var message: String
  }

  static let maximumDepth = 256

  private let bytes: [UInt8]
  private var index = 0
  private var line = 1

  /// Parses `text`, which must hold exactly one JSON value (and white space).
  static func parse(_ text: String) throws(Failure) -> JSONValue {
    var parser = JSONParser(bytes: Array(text.utf8))
    let value = try parser.value(depth: 0)
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else {
      throw parser.failure("unexpected text after the JSON value")
    }
    return value
  }

  private init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  private func failure(_ message: String) -> Failure {
    Failure(line: line, message: message)
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x0A:
        line += 1
        index += 1
      case 0x20, 0x09, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func value(depth: Int) throws(Failure) -> JSONValue {
    guard depth < Self.maximumDepth else { throw failure("nested too deeply") }
    skipWhitespace()
    guard index < bytes.count else { throw failure("unexpected end of the document") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try object(depth: depth)
    case UInt8(ascii: "["): return try array(depth: depth)
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
    default: throw failure("unexpected character where a value should start")
    }
  }

  private mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count,
      Array(bytes[index..<index + expected.count]) == expected
    else { throw failure("unexpected character where a value should start") }
    index += expected.count
    return value
  }

  private mutating func number() throws(Failure) -> JSONValue {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    var isInteger = true
    while index < bytes.count {
      let byte = bytes[index]
      if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
        index += 1
      } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
      {
        isInteger = false
        index += 1
      } else {
        break
      }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    if isInteger, let value = Int64(text) { return .int(value) }
    guard let value = Double(text), value.isFinite else { throw failure("bad number '\(text)'") }
    return .double(value)
  }

  private mutating func string() throws(Failure) -> String {
    index += 1  // the opening quote
    var scalars = String.UnicodeScalarView()
    var run = index
    func flush(_ parser: JSONParser, upTo end: Int) {
      scalars.append(
        contentsOf: String(decoding: parser.bytes[run..<end], as: UTF8.self).unicodeScalars)
    }
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        flush(self, upTo: index)
        index += 1
        return String(scalars)
      }
      if byte < 0x20 { throw failure("a control character inside a string") }
      guard byte == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      flush(self, upTo: index)
      index += 1
      guard index < bytes.count else { break }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "\""): scalars.append("\"")
      case UInt8(ascii: "\\"): scalars.append("\\")
      case UInt8(ascii: "/"): scalars.append("/")
      case UInt8(ascii: "b"): scalars.append("\u{8}")
      case UInt8(ascii: "f"): scalars.append("\u{C}")
      case UInt8(ascii: "n"): scalars.append("\n")
      case UInt8(ascii: "r"): scalars.append("\r")
      case UInt8(ascii: "t"): scalars.append("\t")
      case UInt8(ascii: "u"):
        var code = try hex4()
        if (0xD800..<0xDC00).contains(code), bytes.count - index >= 6,
          bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
        {
          index += 2
          let low = try hex4()
          guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate") }
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else { throw failure("a lone surrogate") }
        scalars.append(scalar)
      default: throw failure("a bad escape in a string")
      }
      run = index
    }
    throw failure("a string is never closed")
  }

  private mutating func hex4() throws(Failure) -> UInt32 {
    guard bytes.count - index >= 4 else { throw failure("a bad \\u escape") }
    var code: UInt32 = 0
    for _ in 0..<4 {
      guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else {
        throw failure("a bad \\u escape")
      }
      code = code * 16 + UInt32(digit)
      index += 1
    }
    return code
  }

  private mutating func array(depth: Int) throws(Failure) -> JSONValue {
    index += 1
    var values: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(values)
    }
    while true {
      values.append(try value(depth: depth + 1))
      skipWhitespace()
      guard index < bytes.count else { throw failure("an array is never closed") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(values)
      } else {
        throw failure("expected ',' or ']' in an array")
      }
    }
  }

  private mutating func object(depth: Int) throws(Failure) -> JSONValue {
    index += 1
    var members: [(String, JSONValue)] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw failure("expected a key in double quotes")
      }
      let key = try string()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw failure("expected ':' after a key")
      }
      index += 1
      members.append((key, try value(depth: depth + 1)))
      skipWhitespace()
      guard index < bytes.count else { throw failure("an object is never closed") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      } else {
        throw failure("expected ',' or '}' in an object")
      }
    }
  }
}

extension JSONValue {
  /// The member `key` of an object (the first, when repeated); `nil` for anything else.
  subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  var intValue: Int64? {
    if case .int(let value) = self { return value }
    return nil
  }

  var arrayValue: [JSONValue]? {
    if case .array(let values) = self { return values }
    return nil
  }
}
