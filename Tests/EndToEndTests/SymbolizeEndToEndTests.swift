import Foundation
import TestSupport
import Testing

/// `--symbolize` against a real binary: the CLI itself, whose symbols `llvm-nm` lists.
@Suite struct SymbolizeEndToEndTests {
  /// A global Swift function of the CLI, with its mangled name and offset.
  private func symbol(containing fragment: String) throws -> (mangled: String, offset: UInt64)? {
    let nm = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
      .map { "\($0)/llvm-nm" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let nm else { return nil }
    let text = try ChildProcess(
      URL(fileURLWithPath: nm), ["--defined-only", CLIRun.executable.path],
      standardError: .inherited
    ).run().standardOutput
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard parts.count == 3, parts[1] == "T", parts[2].hasPrefix("$s"),
        parts[2].contains(fragment),
        let offset = UInt64(parts[0], radix: 16)
      else { continue }
      return (String(parts[2]), offset)
    }
    return nil
  }

  @Test func framesWithModuleAndOffsetGetNamesAndLines() throws {
    // ReportCommand.run(_:) in the CLI's own binary.
    guard let (_, offset) = try symbol(containing: "13ReportCommandO3run") else {
      Issue.record("llvm-nm or the symbol is missing; cannot test --symbolize")
      return
    }
    let binary = CLIRun.executable.path
    let log =
      [
        #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"x","wall":"w","delay_ms":100,"frames":8}"#,
        #"{"ev":"stack","id":1,"frames":[{"ip":"0x1","mod":"\#(binary)","off":"0x\#(String(offset + 4, radix: 16))"},{"ip":"0x2","sym":"Already.symbolized() -> ()"},{"ip":"0x3","mod":"/nonexistent/lib.so","off":"0x10"},{"ip":"0x4","mod":"\#(binary)","off":"0x\#(String(offset + 4, radix: 16))","sym":"Recorded.name() -> ()"}]}"#,
        #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T.Node","q":"shared","tid":1,"depth":1,"stack":1}"#,
        #"{"ev":"end","t":2,"why":"exit","pending":1,"lost":0}"#,
      ].joined(separator: "\n") + "\n"
    let run = try CLIRun.run(
      ["report", "--symbolize", "--format", "json", "-"], input: Data(log.utf8))
    #expect(run.status == 0)
    let object =
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
    let findings = try #require(object?["findings"] as? [[String: Any]])
    let stack = try #require(findings.first?["stack"] as? [[String: Any]])
    let first = stack[0]
    #expect((first["sym"] as? String)?.contains("ReportCommand.run") == true, "\(first)")
    #expect((first["file"] as? String)?.hasSuffix("ReportCommand.swift") == true, "\(first)")
    #expect((first["line"] as? Int ?? 0) > 0)
    #expect(stack[1]["sym"] as? String == "Already.symbolized() -> ()")
    #expect(stack[1]["file"] == nil)
    #expect(stack[2]["sym"] == nil)
    #expect(run.standardError.contains("/nonexistent/lib.so is not on this machine"))
    // The recorder's name is kept; the file and line are added.
    #expect(stack[3]["sym"] as? String == "Recorded.name() -> ()")
    #expect((stack[3]["file"] as? String)?.hasSuffix("ReportCommand.swift") == true, "\(stack[3])")
  }

  /// A log whose one finding (never released) was enqueued from `ReportCommand.run` in the
  /// CLI's binary, named by module and offset only; nil when llvm-nm or the symbol is missing.
  private func unsymbolizedLog() throws -> Data? {
    guard let (_, offset) = try symbol(containing: "13ReportCommandO3run") else { return nil }
    let binary = CLIRun.executable.path
    let log =
      [
        #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"x","wall":"w","delay_ms":100,"frames":8}"#,
        #"{"ev":"stack","id":1,"frames":[{"ip":"0x1","mod":"\#(binary)","off":"0x\#(String(offset + 4, radix: 16))"}]}"#,
        #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T.Node","q":"shared","tid":1,"depth":1,"stack":1}"#,
        #"{"ev":"end","t":2,"why":"exit","pending":1,"lost":0}"#,
      ].joined(separator: "\n") + "\n"
    return Data(log.utf8)
  }

  /// `check`, `explain` and `diff` take `--symbolize` as `report` does: the frame gets its
  /// name and line, and without the option it stays module+offset.
  @Test(arguments: [
    ["check", "--symbolize", "LOG"], ["explain", "--symbolize", "LOG", "1"],
    ["diff", "--symbolize", "BASE", "LOG"],
  ])
  func everyCommandThatPrintsStacksSymbolizes(_ arguments: [String]) throws {
    guard let log = try unsymbolizedLog() else {
      Issue.record("llvm-nm or the symbol is missing; cannot test --symbolize")
      return
    }
    let scratch = try ScratchDirectory("symbolize")
    defer { scratch.remove() }
    try log.write(to: URL(fileURLWithPath: scratch.file("head.jsonl")))
    try Data(log.prefix { $0 != UInt8(ascii: "\n") } + [UInt8(ascii: "\n")])
      .write(to: URL(fileURLWithPath: scratch.file("base.jsonl")))
    let resolved = arguments.map {
      $0 == "LOG" ? scratch.file("head.jsonl") : $0 == "BASE" ? scratch.file("base.jsonl") : $0
    }
    let symbolized = try CLIRun.run(resolved)
    let plain = try CLIRun.run(resolved.filter { $0 != "--symbolize" })
    let name = "dealloctrace_cli.ReportCommand.run("
    #expect(symbolized.standardOutput.contains(name), "\(symbolized.standardOutput)")
    #expect(!plain.standardOutput.contains(name), "\(plain.standardOutput)")
    if arguments[0] != "diff" {
      #expect(symbolized.standardOutput.contains("ReportCommand.swift:"))
    }
    #expect(symbolized.status == plain.status)
  }
}
