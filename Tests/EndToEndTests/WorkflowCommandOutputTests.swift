import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Issue 29, item 6: a GitHub runner executes every line of a step's output whose first
/// characters after leading white space are `::`. JUnit on standard output
/// (`check --junit -`) and HTML on standard output (`report --format html`) carried the raw
/// line breaks of a check's label or a type name, so a log could run `::stop-commands::` or
/// `::error file=…::` in the job. Each test runs the built CLI on such a log.
@Suite struct WorkflowCommandOutputTests {
  /// Text that, put raw on a line of its own, is a workflow command: after `\n`, after `\r`,
  /// after white space that the runner trims, and at the start of a name.
  static let hostile =
    "::error file=a.swift,line=1::at the start\n::stop-commands::token\n  ::error::indented"
    + "\r::warning::after a return\n\u{A0}\u{2003}::notice::after Unicode spaces\n\t::debug::tab"

  /// A log with a real leak whose type name, queue, mark and check label are `hostile`.
  static func hostileLog(in scratch: ScratchDirectory) throws -> String {
    func json(_ text: String) -> String {
      let data = try! JSONSerialization.data(withJSONObject: [text], options: [])
      return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
    let name = json(hostile)
    let lines = [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":\#(name),"delay_ms":100,"frames":1}"#,
      #"{"ev":"stack","id":1,"frames":[{"ip":"0x1000","sym":\#(name)}]}"#,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0x7f00a000","type":\#(name),"q":\#(name),"tid":7,"depth":1,"stack":1}"#,
      #"{"ev":"mark","t":1500,"label":\#(name),"tid":7}"#,
      #"{"ev":"release","t":2000,"id":1,"tid":8,"freed":false,"rc":1}"#,
      #"{"ev":"check","t":3000,"obj":"0x7f00a000","type":\#(name),"alive":true,"label":\#(name),"id":1}"#,
      #"{"ev":"end","t":9000000000,"why":"exit","pending":0,"lost":0}"#,
    ]
    let path = scratch.file("hostile.jsonl")
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: path, atomically: false, encoding: .utf8)
    return path
  }

  /// The lines a runner would read (it splits at `\n` and at `\r`) that are workflow
  /// commands: `::` after any leading white space it trims.
  static func commandLines(_ output: String) -> [String] {
    output.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
      .map { String($0.drop { $0.isWhitespace }) }
      .filter { $0.hasPrefix("::") }
  }

  @Test(arguments: [[], ["--github"]])
  func junitOnStandardOutputHasNoWorkflowCommand(_ extra: [String]) throws {
    let scratch = try ScratchDirectory("junit-stdout")
    defer { scratch.remove() }
    let log = try Self.hostileLog(in: scratch)
    let run = try CLIRun.run(
      ["check", log, "--max-true-leaks", "0", "--junit", "-", "-o", scratch.file("verdict.txt")]
        + extra)
    #expect(run.status == 1, "\(run.standardError)")
    #expect(Self.commandLines(run.standardOutput) == [])
    // Still the same XML: the label's text, line breaks and all, reads back.
    let document = try XMLDocument(data: Data(run.standardOutput.utf8), options: [])
    let text = document.rootElement()?.stringValue ?? ""
    #expect(text.contains("::stop-commands::token"))
    #expect(text.contains("at the start\n::stop-commands::token\n  ::error::indented"))
  }

  @Test func htmlOnStandardOutputHasNoWorkflowCommand() throws {
    let scratch = try ScratchDirectory("html-stdout")
    defer { scratch.remove() }
    let log = try Self.hostileLog(in: scratch)
    let run = try CLIRun.run(["report", "--format", "html", log])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput.contains("<html"))
    #expect(Self.commandLines(run.standardOutput) == [])
    #expect(run.standardOutput.contains("stop-commands::token"))
  }
}
