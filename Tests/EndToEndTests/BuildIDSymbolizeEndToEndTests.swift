import Foundation
import TestSupport
import Testing

/// `--symbolize` uses a module's file only when its build id is the one the log recorded:
/// a rebuilt binary's file:line belongs to other code.
@Suite struct BuildIDSymbolizeEndToEndTests {
  /// `Build ID: …` of `readelf -n path`; nil when readelf is missing.
  private func readelfBuildID(_ path: String) throws -> String? {
    let readelf = ["/usr/bin/readelf", "/usr/bin/llvm-readelf"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let readelf else { return nil }
    let output = try ChildProcess(URL(fileURLWithPath: readelf), ["-n", path]).run()
      .standardOutput
    for line in output.split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 3, parts[0] == "Build", parts[1] == "ID:" { return String(parts[2]) }
    }
    return nil
  }

  /// The offset of a global Swift function of `binary` (the CLI by default) whose mangled
  /// name contains `fragment`, from `llvm-nm` (`dynamic`: its dynamic symbol table).
  private func offset(
    ofSymbolContaining fragment: String, in binary: String = CLIRun.executable.path,
    dynamic: Bool = false
  ) throws -> UInt64? {
    let nm = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
      .map { "\($0)/llvm-nm" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let nm else { return nil }
    let text = try ChildProcess(
      URL(fileURLWithPath: nm), ["--defined-only"] + (dynamic ? ["-D"] : []) + [binary]
    ).run().standardOutput
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 3, parts[1] == "T", parts[2].hasPrefix("$s"), parts[2].contains(fragment) {
        return UInt64(parts[0], radix: 16)
      }
    }
    return nil
  }

  /// A log of two never-released objects enqueued from `ReportCommand.run` in the CLI's
  /// binary (two stacks, two offsets), the first frame naming the module carrying
  /// `buildID` as `build_id` (a JSON string's contents), the second none (the reader carries
  /// the session's build id to it); symbolized to JSON.
  private func symbolizedReport(buildID: String, offset: UInt64) throws -> (
    stacks: [[[String: Any]]], standardError: String, status: Int32
  ) {
    let binary = CLIRun.executable.path
    func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
    let log =
      [
        #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"x","wall":"w","delay_ms":100,"frames":8}"#,
        #"{"ev":"stack","id":1,"frames":[{"ip":"0x1","mod":"\#(binary)","off":"\#(hex(offset + 4))","build_id":"\#(buildID)"}]}"#,
        #"{"ev":"stack","id":2,"frames":[{"ip":"0x2","mod":"\#(binary)","off":"\#(hex(offset + 8))"}]}"#,
        #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T.Node","q":"shared","tid":1,"depth":1,"stack":1}"#,
        #"{"ev":"enqueue","t":2,"id":2,"obj":"0x20","type":"T.Leaf","q":"shared","tid":1,"depth":2,"stack":2}"#,
        #"{"ev":"end","t":3,"why":"exit","pending":2,"lost":0}"#,
      ].joined(separator: "\n") + "\n"
    let run = try CLIRun.run(
      ["report", "--symbolize", "--format", "json", "-"], input: Data(log.utf8))
    let object =
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
    let findings = try #require(object?["findings"] as? [[String: Any]])
    return (findings.compactMap { $0["stack"] as? [[String: Any]] }, run.standardError, run.status)
  }

  @Test func aRebuiltModuleStaysUnsymbolizedWithOneEscapedWarning() throws {
    guard let recorded = try readelfBuildID(CLIRun.executable.path),
      let offset = try offset(ofSymbolContaining: "13ReportCommandO3run")
    else {
      Issue.record("readelf, llvm-nm, the build id or the symbol is missing")
      return
    }
    // Another build's id, with an escape sequence a hostile log could carry.
    let altered = String(recorded.reversed()) + #"\u001b[2J"#
    let report = try symbolizedReport(buildID: altered, offset: offset)
    #expect(report.status == 0)
    #expect(report.stacks.count == 2)
    for frame in report.stacks.flatMap({ $0 }) {
      #expect(frame["file"] == nil, "\(frame)")
      #expect(frame["line"] == nil, "\(frame)")
    }
    let warnings = report.standardError.split(separator: "\n").filter {
      $0.contains("is not the build the log was recorded with")
    }
    #expect(warnings.count == 1, "\(report.standardError)")
    #expect(warnings.first?.contains(CLIRun.executable.path) == true)
    #expect(warnings.first?.contains(recorded) == true, "the file's build id is named")
    #expect(!report.standardError.contains("\u{1B}"), "\(report.standardError)")
  }

  @Test func theRecordedBuildIsSymbolizedWithoutAWarning() throws {
    guard let recorded = try readelfBuildID(CLIRun.executable.path),
      let offset = try offset(ofSymbolContaining: "13ReportCommandO3run")
    else {
      Issue.record("readelf, llvm-nm, the build id or the symbol is missing")
      return
    }
    let report = try symbolizedReport(buildID: recorded, offset: offset)
    #expect(report.status == 0)
    #expect(report.stacks.count == 2)
    for frame in report.stacks.flatMap({ $0 }) {
      #expect((frame["file"] as? String)?.hasSuffix("ReportCommand.swift") == true, "\(frame)")
    }
    #expect(!report.standardError.contains("build id"), "\(report.standardError)")
  }

  /// A toolchain library (no line tables) of the recorded build gets its name and no
  /// file:line: llvm-symbolizer's `??:0` is no location.
  @Test func aToolchainFrameGetsNoFileAndLine() throws {
    // The toolchain's libswiftCore, beside the `swift-demangle` on PATH.
    let library = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
      .map { URL(fileURLWithPath: "\($0)/swift-demangle").resolvingSymlinksInPath() }
      .first { FileManager.default.isExecutableFile(atPath: $0.path) }?
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("lib/swift/linux/libswiftCore.so").path
    guard let library, FileManager.default.fileExists(atPath: library),
      let recorded = try readelfBuildID(library),
      let offset = try offset(ofSymbolContaining: "SS", in: library, dynamic: true)
    else {
      Issue.record("the toolchain's libswiftCore.so, readelf or llvm-nm is missing")
      return
    }
    let log =
      [
        #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"x","wall":"w","delay_ms":100,"frames":8}"#,
        #"{"ev":"stack","id":1,"frames":[{"ip":"0x1","mod":"\#(library)","off":"0x\#(String(offset + 4, radix: 16))","build_id":"\#(recorded)"}]}"#,
        #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T.Node","q":"shared","tid":1,"depth":1,"stack":1}"#,
        #"{"ev":"end","t":2,"why":"exit","pending":1,"lost":0}"#,
      ].joined(separator: "\n") + "\n"
    let run = try CLIRun.run(
      ["report", "--symbolize", "--format", "json", "-"], input: Data(log.utf8))
    #expect(run.status == 0)
    let object =
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
    let findings = try #require(object?["findings"] as? [[String: Any]])
    let frame = try #require((findings.first?["stack"] as? [[String: Any]])?.first)
    #expect((frame["sym"] as? String)?.isEmpty == false, "\(frame)")
    #expect(frame["file"] == nil, "\(frame)")
    #expect(frame["line"] == nil, "\(frame)")
    #expect(!run.standardError.contains("build id"), "\(run.standardError)")
  }
}
