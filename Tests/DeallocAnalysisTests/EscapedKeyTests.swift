import Foundation
import TestSupport
import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// Issue 29, item 4: JSON lets a writer escape any character of a key or a value
/// (`"\u0072elease"`), and a line so written must read exactly as its plain form, through the
/// general parser and the reader's fast paths alike. Escaped kinds used to be unknown kinds
/// (a real leak passed `check`), an escaped `stack` key was skipped (finding ids changed) and
/// an escaped `holders` key turned holders off.
@Suite struct EscapedKeyTests {
  /// One line of every kind, with every optional field the contract has.
  static let plainLines = [
    #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Shop","wall":"W","delay_ms":100,"frames":32,"holders":true}"#,
    #"{"ev":"thread","tid":7,"name":"main"}"#,
    #"{"ev":"stack","id":1,"frames":[{"ip":"0x55d0","mod":"/app/Feed","off":"0x1b2c3","sym":"f()"},{"ip":"0x1"}]}"#,
    #"{"ev":"enqueue","t":1200,"id":1,"obj":"0x600000c01230","type":"Feed.DataController","q":"shared","tid":4242,"depth":1,"stack":1,"rc":1}"#,
    #"{"ev":"drain","t":5,"q":"shared","n":1,"tid":4250,"why":"timer"}"#,
    #"{"ev":"release","t":11685775,"id":385,"tid":4250,"freed":false,"rc":2}"#,
    #"{"ev":"dealloc","t":524079441,"id":10000}"#,
    #"{"ev":"mark","t":5000000,"label":"screen closed","tid":4242}"#,
    #"{"ev":"check","t":1671249,"obj":"0x600000c000c0","type":"Feed.Node21","alive":true,"label":"FeedTests.testClose","id":3,"tid":4242}"#,
    #"{"ev":"holders","t":2000100,"id":4,"obj":"0x7f75aa00a2f0","type":"Shop.Settings","why":"check","direct":1,"more":0,"paths":[{"root":{"kind":"global","sym":"Shop.Settings.shared","mod":"/app/Shop"},"steps":[{"type":"Shop.Box","obj":"0x20","off":8,"field":"f"}]}],"scan_us":700,"surplus":0}"#,
    #"{"ev":"cut","t":5,"max_size":20000}"#,
    #"{"ev":"end","t":250100000,"why":"exit","pending":0,"lost":0,"unwritten":3,"holder_scans":10,"holder_scans_skipped":1}"#,
  ]

  /// `line` with the first character of every key, of the record's kind and of every hex
  /// string written as a `\u` escape: the same JSON value.
  static func escaped(_ line: String) -> String {
    func escape(_ character: Character) -> String {
      let value = character.unicodeScalars.first!.value
      let hex = String(value, radix: 16)
      return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
    var out = line.replacing(#/"([a-z_])([a-z_]*)":/#) { match in
      "\"\(escape(Character(String(match.1))))\(match.2)\":"
    }
    out = out.replacing(#/"ev":"([a-z])/#) { match in
      "\"ev\":\"\(escape(Character(String(match.1))))"
    }
    out = out.replacing(#/"0x([0-9a-fA-F])/#) { match in
      "\"0x\(escape(Character(String(match.1))))"
    }
    return out
  }

  private func general(_ line: String) throws -> LogRecord {
    var parser = RecordParser()
    return try Array(line.utf8).withUnsafeBufferPointer { try parser.parseAnyShape($0) }
  }

  private func reader(_ line: String) throws -> LogRecord {
    var parser = RecordParser()
    return try Array(line.utf8).withUnsafeBufferPointer { try parser.parse($0) }
  }

  @Test(arguments: plainLines)
  func anEscapedLineReadsAsItsPlainForm(_ plain: String) throws {
    let escapedLine = Self.escaped(plain)
    #expect(escapedLine != plain)
    #expect(escapedLine.contains(#"\u00"#))
    let expected = try general(plain)
    if case .unknown = expected { Issue.record("the plain line is an unknown kind: \(plain)") }
    #expect(try general(escapedLine) == expected, "\(escapedLine)")
    #expect(try reader(escapedLine) == expected, "\(escapedLine)")
    // The fast path declines escapes; when it takes a line, it must agree.
    var interner = StringInterner()
    let fast = Array(escapedLine.utf8).withUnsafeBufferPointer {
      RecorderShapeParser.parse($0, interner: &interner)
    }
    #expect(fast == nil || fast == expected)
    #expect(Array(escapedLine.utf8).withUnsafeBufferPointer(RecorderShapeParser.hotLine) == nil)
  }

  /// A decoded control character is no key or kind of the contract: `"t\u0000"` is not `t`,
  /// `"\u0001"` is not the code of `unwritten`, and `"release\u0000"` is an unknown kind.
  @Test func aDecodedControlCharacterMatchesNoKey() throws {
    #expect(
      try general(#"{"ev":"dealloc","t":5,"t\u0000":9,"id":1}"#)
        == .dealloc(DeallocRecord(time: 5, id: 1)))
    #expect(
      try general(#"{"ev":"end","t":5,"why":"exit","pending":0,"lost":0,"\u0001":7}"#)
        == general(#"{"ev":"end","t":5,"why":"exit","pending":0,"lost":0}"#))
    #expect(
      try general(#"{"ev":"release\u0000","t":1,"id":1,"freed":true}"#)
        == .unknown(kind: "release\u{0}"))
  }

  /// The whole way through the analysis: a log in the escaped form gives the report of the
  /// plain one (the same findings, ids and holder paths), and a real leak in it fails the gate.
  @Test func anEscapedLogGivesThePlainLogsReport() throws {
    let plain = try String(
      contentsOf: PackageRoot.appending("fixtures/holders.jsonl"), encoding: .utf8)
    let escapedLog =
      plain.split(separator: "\n").map { Self.escaped(String($0)) }
      .joined(separator: "\n") + "\n"
    #expect(escapedLog != plain)
    let scratch = try ScratchDirectory("escaped")
    defer { scratch.remove() }
    let directory = scratch.path
    let plainPath = directory + "/plain.jsonl"
    let escapedPath = directory + "/escaped.jsonl"
    try plain.write(toFile: plainPath, atomically: false, encoding: .utf8)
    try escapedLog.write(toFile: escapedPath, atomically: false, encoding: .utf8)

    let plainReport = try DeallocAnalysis.analyze([plainPath])
    let escapedReport = try DeallocAnalysis.analyze([escapedPath])
    // The whole JSON report (findings, their ids, holder paths, warnings), but for the name.
    let plainJSON = JSONRenderer().render(plainReport)
    let escapedJSON = JSONRenderer().render(escapedReport)
      .replacingOccurrences(of: "escaped.jsonl", with: "plain.jsonl")
    #expect(escapedJSON == plainJSON)
    #expect(plainJSON.contains(#""holdersRecorded": true"#))
    #expect(plainReport.summary.leaked + plainReport.summary.trueLeaks > 0)
  }
}
