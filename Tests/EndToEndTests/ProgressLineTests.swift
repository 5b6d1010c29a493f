import Foundation
import TestSupport
import Testing

@testable import dealloctrace_cli

/// When `report`, `check` and `export` show a progress line, from injected facts (whether
/// standard error is a terminal, the environment, the inputs' size), and what it says.
@Suite struct ProgressLineTests {
  private let big = ProgressLine.minimumInputBytes + 1

  @Test func aBigInputOnATerminalShowsProgress() {
    #expect(
      ProgressLine.isWanted(standardErrorIsTerminal: true, environment: [:], totalBytes: big))
  }

  @Test func notATerminalShowsNothing() {
    #expect(
      !ProgressLine.isWanted(standardErrorIsTerminal: false, environment: [:], totalBytes: big))
  }

  /// `export` writes its trace while it reads: to a terminal, a progress line there would
  /// be drawn into the trace.
  @Test func outputStreamedToATerminalShowsNothing() {
    #expect(
      !ProgressLine.isWanted(
        standardErrorIsTerminal: true, environment: [:], totalBytes: big, streamsToTerminal: true))
    #expect(
      ProgressLine.isWanted(
        standardErrorIsTerminal: true, environment: [:], totalBytes: big, streamsToTerminal: false))
  }

  @Test func noColorOrCIShowsNothing() {
    for environment in [["NO_COLOR": "1"], ["CI": "true"], ["CI": "1", "NO_COLOR": "yes"]] {
      #expect(
        !ProgressLine.isWanted(
          standardErrorIsTerminal: true, environment: environment, totalBytes: big))
    }
    // Set but empty is unset, as no-color.org defines it.
    #expect(
      ProgressLine.isWanted(
        standardErrorIsTerminal: true, environment: ["NO_COLOR": "", "CI": ""], totalBytes: big))
  }

  @Test func aSmallOrUnsizedInputShowsNothing() {
    for total in [nil, 0, ProgressLine.minimumInputBytes] {
      #expect(
        !ProgressLine.isWanted(standardErrorIsTerminal: true, environment: [:], totalBytes: total))
    }
  }

  @Test func standardInputHasNoTotal() {
    #expect(ProgressLine.totalBytes(of: ["-"]) == nil)
    #expect(ProgressLine.totalBytes(of: ["/dev/null"]) == nil)
  }

  @Test func theTotalIsTheSumOfTheFiles() throws {
    let scratch = try ScratchDirectory("progress")
    defer { scratch.remove() }
    let directory = scratch.url
    try Data(count: 300).write(to: directory.appendingPathComponent("a.jsonl"))
    try Data(count: 200).write(to: directory.appendingPathComponent("b.jsonl"))
    #expect(ProgressLine.totalBytes(of: [directory.path]) == 500)
  }

  @Test func theLineSaysBytesOfTotalAndRate() {
    #expect(
      ProgressLine.text(bytesRead: 512_000_000, totalBytes: 1_084_000_000, seconds: 0.8)
        == "reading 512 MB of 1084 MB (47 %), 640 MB/s")
  }

  @Test func drawsThrottledAndClearsAtTheEnd() {
    let written = Written()
    let line = ProgressLine(totalBytes: 1000) { written.lines.append($0) }
    line.update(bytesRead: 10)
    line.update(bytesRead: 20)  // within the redraw interval: not drawn
    line.finish()
    #expect(written.lines.count == 2)
    #expect(written.lines[0].hasPrefix("\rreading 0 MB of 0 MB (1 %)"))
    #expect(written.lines[1] == "\r\u{1B}[K")
  }

  @Test func nothingDrawnNothingCleared() {
    let written = Written()
    ProgressLine(totalBytes: 1000) { written.lines.append($0) }.finish()
    #expect(written.lines.isEmpty)
  }
}

private final class Written {
  var lines: [String] = []
}
