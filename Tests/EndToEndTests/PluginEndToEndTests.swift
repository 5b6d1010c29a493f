import Foundation
import TestSupport
import XCTest

/// `swift package dealloctrace` on Tests/PluginFixtures/LeakyPackage, a package that depends
/// on this one by path and leaks a retain cycle in one XCTest and one Swift Testing test.
///
/// The fixture builds this whole package again (a few minutes on 2 cores), so the test runs
/// only with DEALLOCTRACE_PLUGIN_TEST=1: `make plugin-test`, which .ci/run calls after
/// `make test`.
final class PluginEndToEndTests: XCTestCase {
  private static let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  private func swiftPackage(_ arguments: [String], in package: URL) throws -> ChildRun {
    let run = try ChildProcess(
      URL(fileURLWithPath: "/usr/bin/env"), ["swift", "package", "dealloctrace"] + arguments,
      directory: package, standardError: .mergedIntoOutput
    ).run(timeout: .seconds(1500))
    XCTAssertFalse(run.timedOut, "swift package dealloctrace ran past 25 minutes")
    return run
  }

  func testPluginGatesALeakyPackageAndItsBaseline() throws {
    guard ProcessInfo.processInfo.environment["DEALLOCTRACE_PLUGIN_TEST"] != nil else {
      throw XCTSkip("set DEALLOCTRACE_PLUGIN_TEST=1 (make plugin-test) to build the fixture")
    }
    // A path dependency's identity is its folder's name: the fixture names "dealloctrace".
    let scratch = try ScratchDirectory("plugin")
    defer { scratch.remove() }
    try FileManager.default.createSymbolicLink(
      at: scratch.url.appendingPathComponent("dealloctrace"),
      withDestinationURL: Self.repository)
    let package = scratch.url.appendingPathComponent("LeakyPackage")
    try FileManager.default.copyItem(
      at: Self.repository.appendingPathComponent("Tests/PluginFixtures/LeakyPackage"),
      to: package)

    let gate = try swiftPackage([], in: package)
    XCTAssertNotEqual(gate.status, 0, gate.standardOutput)
    XCTAssertTrue(gate.standardOutput.contains("FAIL  --max-leaked"), gate.standardOutput)
    XCTAssertTrue(
      gate.standardOutput.contains(
        "retain cycle: LeakyTests.XCTestCartModel.onChange → closure context"),
      "the XCTest leak's holders")
    XCTAssertTrue(
      gate.standardOutput.contains(
        "retain cycle: LeakyTests.SwiftTestingCheckout.onPay → closure context"),
      "the Swift Testing leak's holders")
    XCTAssertTrue(gate.standardOutput.contains("ROOT CYCLE"), "the census's cycle")
    let html = package.appendingPathComponent(
      ".build/plugins/DeallocTracePlugin/outputs/run/report.html")
    XCTAssertTrue(FileManager.default.fileExists(atPath: html.path), "the HTML report")

    let baseline = package.appendingPathComponent("leaks-baseline.json").path
    // A baseline records the queue's findings, not the census's groups (check judges those
    // with --max-process-leaks alone), so the census's cycle is allowed here.
    let census = ["--max-process-leaks", "1"]
    let write = try swiftPackage(["--write-baseline", "leaks-baseline.json"] + census, in: package)
    XCTAssertTrue(FileManager.default.fileExists(atPath: baseline), write.standardOutput)
    let judged = try swiftPackage(["--baseline", "leaks-baseline.json"] + census, in: package)
    XCTAssertEqual(judged.status, 0, judged.standardOutput)

    let filtered = try swiftPackage(["--filter", "LeakyXCTests"], in: package)
    XCTAssertTrue(filtered.standardOutput.contains("XCTestCartModel"), filtered.standardOutput)
    XCTAssertFalse(filtered.standardOutput.contains("SwiftTestingCheckout"), "filtered out")
  }
}
