import DeallocAnalysis
import DeallocLog
import Foundation
import GoldenFiles
import TestSupport
import Testing

/// The repository's `fixtures/gate/` folder, reports of its logs, and golden files in
/// `fixtures/gate/expected/` (re-recorded with `DEALLOCTRACE_RECORD_GOLDEN=1`, as the
/// analysis tests do; a recording run always fails).
enum GateFixtures {
  static let root = PackageRoot.url

  static func path(_ name: String) -> String {
    root.appendingPathComponent("fixtures/gate/\(name)").path
  }

  /// Analyses `fixtures/gate/NAME` as the CLI would, named repository-relative in messages.
  static func report(
    _ name: String, options: AnalysisOptions = AnalysisOptions(),
    symbolizer: (any FrameSymbolizer)? = nil
  ) throws -> Report {
    let input = LogInput(path: path(name), displayName: "fixtures/gate/\(name)")
    var reader = LogReader()
    var analyzer = Analyzer(options: options, symbolizer: symbolizer)
    try reader.read([input], into: &analyzer)
    return analyzer.finish(inputs: [input.displayName])
  }

  /// The fixture suppressions, named `fixtures/gate/suppressions.txt` in messages.
  static func suppressions() throws -> SuppressionList {
    let text = try String(contentsOfFile: path("suppressions.txt"), encoding: .utf8)
    return try SuppressionList.parse(text, file: "fixtures/gate/suppressions.txt")
  }

  /// Compares `actual` with `fixtures/gate/expected/NAME` (see `GoldenFile`).
  static func assertGolden(
    _ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    try GoldenFile.assertMatches(
      actual, "fixtures/gate/expected/\(name)", sourceLocation: sourceLocation)
  }
}

/// A symbolizer that gives every frame of the fixture's test code a file and line, as
/// `--symbolize` would with llvm-symbolizer on a real binary.
struct FixtureSymbolizer: FrameSymbolizer {
  var problems: [String] { [] }

  func symbolize(_ frames: [Frame]) -> [Frame] {
    frames.map { frame in
      var frame = frame
      // The owner of "closure #1 (…) -> () in Feed.FeedScreen.teardownCells()" is after " in ".
      let owner = frame.symbol.map { $0.components(separatedBy: " in ").last! } ?? ""
      if owner.hasPrefix("Feed.") {
        frame.file = "/ci/work/feed/Sources/Feed/\(owner.split(separator: ".")[1]).swift"
        frame.line = Int((frame.offset ?? 0) % 1000) + 1
      }
      return frame
    }
  }
}

/// Like ``FixtureSymbolizer``, and the third-party SDK's frames get a file too, in a
/// dependency outside the checkout (`/ci/deps/sdk`).
struct DependencySymbolizer: FrameSymbolizer {
  var problems: [String] { [] }

  func symbolize(_ frames: [Frame]) -> [Frame] {
    FixtureSymbolizer().symbolize(frames).map { frame in
      var frame = frame
      if frame.symbol?.hasPrefix("ThirdPartySDK.Session.") == true {
        frame.file = "/ci/deps/sdk/Session.swift"
        frame.line = 12
      }
      return frame
    }
  }
}

/// Gives a file and line only to the queue's and the tracer's own frames, as when the
/// dependency was built with debug information and the program without.
struct MachineryOnlySymbolizer: FrameSymbolizer {
  var problems: [String] { [] }

  func symbolize(_ frames: [Frame]) -> [Frame] {
    frames.map { frame in
      var frame = frame
      if Signature.isMachinery(frame) {
        frame.file =
          "/ci/work/feed/.build/checkouts/dealloctrace/Sources/DeallocQueue/DeallocQueue.swift"
        frame.line = 77
      }
      return frame
    }
  }
}

/// Writes a log with `count` distinct leaked types, each from its own stack, to a temporary
/// file, for tests that need more findings than GitHub shows.
func writeManyLeaksLog(count: Int) throws -> String {
  var lines = [
    #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/app/Many","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#
  ]
  for index in 1...count {
    lines.append(
      #"{"ev":"stack","id":\#(index),"frames":[{"ip":"0x\#(String(0x1000 + index, radix: 16))","sym":"Many.Owner\#(index).drop() -> ()"}]}"#
    )
    // The first groups are larger, so that the order of annotations is by size.
    for copy in 0..<(index <= 3 ? 2 : 1) {
      let id = index * 10 + copy
      lines.append(
        #"{"ev":"enqueue","t":\#(id),"id":\#(id),"obj":"0x\#(String(0x10000 + id * 64, radix: 16))","type":"Many.Leaky\#(index)","q":"shared","tid":1,"depth":1,"stack":\#(index)}"#
      )
      lines.append(#"{"ev":"release","t":\#(1000 + id),"id":\#(id),"tid":2,"freed":false,"rc":1}"#)
    }
  }
  lines.append(#"{"ev":"end","t":100000,"why":"exit","pending":0,"lost":0}"#)
  // Removed when the test process exits (ScratchDirectory): the caller reads it.
  let path = try ScratchDirectory("gate-many").file("many-\(count).jsonl")
  try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
  return path
}
