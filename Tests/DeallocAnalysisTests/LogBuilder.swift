import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport

/// Writes a log from lines into a temporary file and reads it back, for tests that need a
/// log of their own shape.
struct TemporaryLog {
  let url: URL

  init(_ lines: [String], name: String = "test.jsonl", terminated: Bool = true) throws {
    url = try Self.makeDirectory().appendingPathComponent(name)
    var text = lines.joined(separator: "\n")
    if terminated && !lines.isEmpty { text += "\n" }
    try Data(text.utf8).write(to: url)
  }

  init(bytes: [UInt8], name: String = "test.jsonl") throws {
    url = try Self.makeDirectory().appendingPathComponent(name)
    try Data(bytes).write(to: url)
  }

  var path: String { url.path }

  /// A scratch directory, removed when the test process exits: a log is a value that tests
  /// copy and pass around, so no single owner knows when it is no longer read.
  private static func makeDirectory() throws -> URL {
    try ScratchDirectory("log").url
  }

  func report(stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) throws(AnalysisError) -> Report
  {
    try DeallocAnalysis.analyze([path], options: AnalysisOptions(stuckAfter: stuckAfter))
  }
}

/// Record lines, short to write.
enum Line {
  static func session(v: Int = 1) -> String {
    #"{"ev":"session","v":\#(v),"t":0,"pid":1,"exe":"/t","wall":"2026-01-01T00:00:00Z","delay_ms":100,"frames":8}"#
  }
  static func enqueue(
    _ id: Int, t: Int64, obj: String? = nil, type: String = "T.Node", q: String = "shared",
    stack: Int? = nil
  ) -> String {
    let address = obj ?? "0x\(String(0x1000 + id * 16, radix: 16))"
    let stackField = stack.map { #","stack":\#($0)"# } ?? ""
    return
      #"{"ev":"enqueue","t":\#(t),"id":\#(id),"obj":"\#(address)","type":"\#(type)","q":"\#(q)","tid":1,"depth":1\#(stackField)}"#
  }
  static func release(_ id: Int, t: Int64, freed: Bool = true, rc: Int = 1) -> String {
    freed
      ? #"{"ev":"release","t":\#(t),"id":\#(id),"tid":2,"freed":true}"#
      : #"{"ev":"release","t":\#(t),"id":\#(id),"tid":2,"freed":false,"rc":\#(rc)}"#
  }
  static func dealloc(_ id: Int, t: Int64) -> String { #"{"ev":"dealloc","t":\#(t),"id":\#(id)}"# }
  static func check(
    t: Int64, obj: String, type: String = "T.Node", alive: Bool = true, id: Int? = nil
  ) -> String {
    let idField = id.map { #","id":\#($0)"# } ?? ""
    return
      #"{"ev":"check","t":\#(t),"obj":"\#(obj)","type":"\#(type)","alive":\#(alive),"label":"L"\#(idField)}"#
  }
  static func end(t: Int64, pending: Int = 0) -> String {
    #"{"ev":"end","t":\#(t),"why":"exit","pending":\#(pending),"lost":0}"#
  }
  static func stack(_ id: Int, symbols: [String]) -> String {
    let frames = symbols.enumerated().map {
      #"{"ip":"0x\#(String(0x5000 + $0.offset, radix: 16))","sym":"\#($0.element)"}"#
    }
    return #"{"ev":"stack","id":\#(id),"frames":[\#(frames.joined(separator: ","))]}"#
  }
}
