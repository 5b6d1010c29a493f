import Testing

@testable import DeallocAnalysis

/// The parser that reads baselines and saved reports: JSON as RFC 8259 has it, the line of
/// the first error, and no stack overflow on hostile nesting.
@Suite struct JSONParserTests {
  @Test func readsEveryKindOfValue() throws {
    let value = try JSONParser.parse(
      #"{"a": [1, -2, 3.5, true, false, null], "s": "q\"\\\/\n\u00e9\ud83d\ude00", "o": {}}"#)
    #expect(
      value["a"] == .array([.int(1), .int(-2), .double(3.5), .bool(true), .bool(false), .null]))
    #expect(value["s"]?.stringValue == "q\"\\/\né😀")
    #expect(value["o"] == .object([]))
  }

  @Test(arguments: [
    ("{\n\n  \"a\": tru\n}", 3), ("[1,\n2,\n]", 3), ("{\"a\": 1} x", 1), ("\"\\ud800\"", 1),
    ("\"abc", 1), ("", 1), ("{\"a\" 1}", 1),
  ])
  func errorsNameTheirLine(_ text: String, _ line: Int) {
    #expect {
      try JSONParser.parse(text)
    } throws: { error in
      (error as? JSONParser.Failure)?.line == line
    }
  }

  @Test func deepNestingIsAnErrorNotACrash() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
    let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect((try? JSONParser.parse(fine)) != nil)
  }
}
