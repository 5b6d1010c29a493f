import Foundation
import Testing

/// `dealloctrace check` sees one leak made in a helper that an XCTest method and a Swift
/// Testing function both call as one finding (issue 28, item 2): a baseline written from the
/// XCTest session alone covers the Swift Testing session.
@Suite struct OneFindingAcrossFrameworksEndToEndTests {
  /// `fixtures/gate/two-frameworks.jsonl` (see OneFindingAcrossFrameworksTests): the XCTest
  /// session, then the Swift Testing one.
  static func sessions() throws -> (xcTest: String, swiftTesting: String) {
    let text = try String(
      contentsOf: CLIRun.root.appendingPathComponent("fixtures/gate/two-frameworks.jsonl"),
      encoding: .utf8)
    let second = try #require(text.range(of: "{\"ev\":\"session\"", options: .backwards))
    return (String(text[..<second.lowerBound]), String(text[second.lowerBound...]))
  }

  @Test func aBaselineOfTheXCTestSessionCoversTheSwiftTestingSession() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-frameworks-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (xcTest, swiftTesting) = try Self.sessions()
    let xcTestLog = directory.appendingPathComponent("xctest.jsonl").path
    let swiftTestingLog = directory.appendingPathComponent("swift-testing.jsonl").path
    let baseline = directory.appendingPathComponent("baseline.json").path
    try Data(xcTest.utf8).write(to: URL(fileURLWithPath: xcTestLog))
    try Data(swiftTesting.utf8).write(to: URL(fileURLWithPath: swiftTestingLog))

    let write = try CLIRun.run(["check", xcTestLog, "--write-baseline", baseline])
    #expect(write.status == 0, "\(write.standardOutput)\(write.standardError)")
    let check = try CLIRun.run(["check", swiftTestingLog, "--baseline", baseline])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    #expect(!check.standardError.contains("rewrite"), "\(check.standardError)")

    // Both sessions in one log: one finding of two objects.
    let both = try CLIRun.run(["check", "fixtures/gate/two-frameworks.jsonl", "--max-leaked", "2"])
    #expect(both.status == 0, "\(both.standardOutput)\(both.standardError)")
    #expect(both.standardOutput.contains("Findings (1)"), "\(both.standardOutput)")

    // Each occurrence names its session and the test it came from, in the report's text,
    // Markdown and HTML alike.
    for format in ["text", "markdown", "html"] {
      let report = try CLIRun.run([
        "report", "--format", format, "fixtures/gate/two-frameworks.jsonl",
      ])
      #expect(report.status == 0, "\(report.standardError)")
      for occurrence in [
        "session 1: from test LeakyXCTests.testClosingTheCartLeaksItsModel()",
        "session 2: from test LeakyTests.closingTheCartLeaksItsModel()",
      ] {
        #expect(report.standardOutput.contains(occurrence), "\(format): \(report.standardOutput)")
      }
    }

    // The XCTest finding's id by rule 2 (it kept the test method) still names the finding.
    let explain = try CLIRun.run(["explain", "fixtures/gate/two-frameworks.jsonl", "8cbbc007513f"])
    #expect(explain.status == 0, "\(explain.standardError)")
    #expect(
      explain.standardOutput.hasPrefix("2 objects match finding id:"), "\(explain.standardOutput)")
  }
}
