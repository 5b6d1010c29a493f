import Foundation
import TestSupport
import Testing

@testable import dealloctrace_cli

/// The progress line as a person sees it: the built `dealloctrace` runs with its standard
/// error on a pseudo-terminal, on an input just over ``ProgressLine/minimumInputBytes``, and
/// the test reads what the terminal received. Each run is compared with the same run with
/// standard error on a pipe, which must show no progress: the terminal may differ from it
/// only by the progress line, and standard output not at all.
@Suite struct ProgressTerminalTests {
  /// The variables that silence the line: the child must not inherit them from a CI runner.
  private static let silencing = ["NO_COLOR", "CI"]

  @Test(arguments: [
    ["report"], ["check"], ["export", "--format", "perfetto"],
  ])
  func aBigInputOnATerminalShowsProgressAndClearsIt(command: [String]) throws {
    let scratch = try ScratchDirectory("progress-terminal")
    defer { scratch.remove() }
    let size = ProgressLine.minimumInputBytes + 1
    // A name that would retitle and wipe the terminal, were it written there unescaped.
    let log = try BigLog.write(size: size, to: scratch.file("\u{1B}]0;owned\u{07}\u{1B}[2J.jsonl"))

    let onPipe = try CLIRun.run(command + [log], clearing: Self.silencing)
    let onTerminal = try CLIRun.run(
      command + [log], clearing: Self.silencing, standardError: .terminal)

    #expect(!onPipe.standardError.contains("\r"), "no progress when standard error is a pipe")
    #expect(!onPipe.standardOutput.isEmpty)
    #expect(onTerminal.standardOutput == onPipe.standardOutput)
    #expect(onTerminal.status == onPipe.status)
    let shown = try #require(ProgressShown(onTerminal.standardError, totalBytes: size))
    #expect(!shown.lines.isEmpty)
    #expect(shown.afterwards == onPipe.standardError)
    #expect(!onTerminal.standardError.contains("\u{1B}]"))
  }

  /// `export` without `-o` writes its trace to standard output as it reads: with both
  /// streams on one terminal, no progress line is drawn into the trace, which arrives as it
  /// does on a pipe.
  @Test func exportStreamingToTheTerminalShowsNoProgress() throws {
    let scratch = try ScratchDirectory("progress-terminal")
    defer { scratch.remove() }
    let log = try BigLog.write(
      size: ProgressLine.minimumInputBytes + 1, to: scratch.file("big.jsonl"))
    let command = ["export", "--format", "perfetto", log]

    let onPipe = try CLIRun.run(command, clearing: Self.silencing)
    let onTerminal = try CLIRun.run(
      command, clearing: Self.silencing, standardError: .terminalWithOutput)

    #expect(onTerminal.status == onPipe.status)
    #expect(onTerminal.standardOutput.isEmpty)
    #expect(!onTerminal.standardError.contains("reading "))
    #expect(!onTerminal.standardError.contains("\r"))
    #expect(onTerminal.standardError.hasPrefix(onPipe.standardOutput))
  }

  /// Inputs each under the threshold but over it together: one line, against their sum.
  @Test func severalInputsShowProgressAgainstTheirSum() throws {
    let scratch = try ScratchDirectory("progress-terminal")
    defer { scratch.remove() }
    let half = ProgressLine.minimumInputBytes / 2 + 1
    for name in ["a.jsonl", "b.jsonl"] {
      _ = try BigLog.write(size: half, to: scratch.file(name))
    }

    let onPipe = try CLIRun.run(["report", scratch.path], clearing: Self.silencing)
    let onTerminal = try CLIRun.run(
      ["report", scratch.path], clearing: Self.silencing, standardError: .terminal)

    #expect(onTerminal.standardOutput == onPipe.standardOutput)
    let shown = try #require(ProgressShown(onTerminal.standardError, totalBytes: 2 * half))
    #expect(!shown.lines.isEmpty)
    #expect(shown.afterwards == onPipe.standardError)
  }

  @Test(arguments: [["NO_COLOR": "1"], ["CI": "1"], ["CI": "true", "NO_COLOR": "yes"]])
  func noColorOrCIShowNothing(environment: [String: String]) throws {
    let scratch = try ScratchDirectory("progress-terminal")
    defer { scratch.remove() }
    let log = try BigLog.write(
      size: ProgressLine.minimumInputBytes + 1, to: scratch.file("big.jsonl"))
    try expectNoProgress(["report", log], environment: environment)
  }

  @Test func anInputAtTheThresholdShowsNothing() throws {
    let scratch = try ScratchDirectory("progress-terminal")
    defer { scratch.remove() }
    let log = try BigLog.write(size: ProgressLine.minimumInputBytes, to: scratch.file("at.jsonl"))
    try expectNoProgress(["report", log])
    try expectNoProgress(["report", "fixtures/feed.jsonl"])
  }

  /// Standard input has no total to show progress against, however much it carries.
  @Test func bigStandardInputShowsNothing() throws {
    try expectNoProgress(
      ["report", "-"], input: BigLog.bytes(size: ProgressLine.minimumInputBytes + 1))
  }

  /// Runs `arguments` with standard error on a terminal and on a pipe: both say the same.
  private func expectNoProgress(
    _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let onPipe = try CLIRun.run(
      arguments, input: input, environment: environment, clearing: Self.silencing)
    let onTerminal = try CLIRun.run(
      arguments, input: input, environment: environment, clearing: Self.silencing,
      standardError: .terminal)
    #expect(onPipe.status == 0, sourceLocation: sourceLocation)
    #expect(onTerminal.standardError == onPipe.standardError, sourceLocation: sourceLocation)
    #expect(onTerminal.standardOutput == onPipe.standardOutput, sourceLocation: sourceLocation)
  }
}

/// What a terminal received from a run with a progress line: the drawings, each from the
/// left margin, then the line cleared, then the rest of standard error. `nil` when it is
/// not that shape (no clearing, or a drawing that is not a progress line).
private struct ProgressShown {
  /// Each drawing's bytes read, total and percentage, in the order drawn.
  var lines: [(read: Int, total: Int, percent: Int)] = []
  var afterwards: Substring

  init?(_ terminal: String, totalBytes: Int) {
    guard let clear = terminal.range(of: "\r\u{1B}[K") else { return nil }
    afterwards = terminal[clear.upperBound...]
    let drawn = terminal[..<clear.lowerBound]
    guard drawn.hasPrefix("\r") else { return nil }
    for line in drawn.dropFirst().split(separator: "\r", omittingEmptySubsequences: false) {
      guard
        let match = line.wholeMatch(
          of: #/reading (\d+) MB of (\d+) MB \((\d+) %\), (\d+) MB/s/#),
        let read = Int(match.1), let total = Int(match.2), let percent = Int(match.3),
        Int(match.4) != nil
      else { return nil }
      lines.append((read, total, percent))
    }
    // Whole megabytes of the one total, never going back, never past the end.
    let megabytes = totalBytes / 1_000_000
    guard lines.allSatisfy({ $0.total == megabytes && $0.read <= megabytes && $0.percent <= 100 })
    else { return nil }
    guard zip(lines, lines.dropFirst()).allSatisfy({ $0.read <= $1.read }) else { return nil }
  }
}

/// Logs around the progress threshold that a debug build reads in a fraction of a second.
///
/// Parsing 100 MB of records takes seconds in a debug build, so the records are a fixture's,
/// followed by one line of NUL bytes: the reader finds its end with `memchr` and skips it
/// cheaply (malformed, or longer than it holds: a warning, alike in both runs).
/// Written as a hole in a sparse file, it costs no disk and no time to write.
private enum BigLog {
  static let records = CLIRun.root.appendingPathComponent("fixtures/feed.jsonl")

  /// Writes a log of exactly `size` bytes at `path`, and returns `path`.
  static func write(size: Int, to path: String) throws -> String {
    let records = try Data(contentsOf: records)
    try records.write(to: URL(fileURLWithPath: path))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.truncate(atOffset: UInt64(size - 1))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data("\n".utf8))
    return path
  }

  /// The same log's bytes, for standard input.
  static func bytes(size: Int) throws -> Data {
    var data = try Data(contentsOf: records)
    data.append(Data(count: size - 1 - data.count))
    data.append(UInt8(ascii: "\n"))
    return data
  }
}
