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

  private func requirePluginTest() throws {
    guard ProcessInfo.processInfo.environment["DEALLOCTRACE_PLUGIN_TEST"] != nil else {
      throw XCTSkip("set DEALLOCTRACE_PLUGIN_TEST=1 (make plugin-test) to build the fixture")
    }
  }

  private func git(_ arguments: [String], in directory: URL) throws {
    let run = try ChildProcess(
      URL(fileURLWithPath: "/usr/bin/env"),
      ["git", "-c", "user.name=test", "-c", "user.email=test@invalid"] + arguments,
      directory: directory, standardError: .mergedIntoOutput
    ).run(timeout: .seconds(300))
    guard run.status == 0, !run.timedOut else {
      throw GitFailed(description: "git \(arguments.joined(separator: " ")): \(run.standardOutput)")
    }
  }

  func testPluginGatesALeakyPackageAndItsBaseline() throws {
    try requirePluginTest()
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
    // The baseline holds the queue's findings and the census's groups of both test
    // processes (XCTest's and Swift Testing's), so the next run passes with no allowance.
    let write = try swiftPackage(["--write-baseline", "leaks-baseline.json"], in: package)
    XCTAssertTrue(FileManager.default.fileExists(atPath: baseline), write.standardOutput)
    let judged = try swiftPackage(["--baseline", "leaks-baseline.json"], in: package)
    XCTAssertEqual(judged.status, 0, judged.standardOutput)

    let filtered = try swiftPackage(["--filter", "LeakyXCTests"], in: package)
    XCTAssertTrue(filtered.standardOutput.contains("XCTestCartModel"), filtered.standardOutput)
    XCTAssertFalse(filtered.standardOutput.contains("SwiftTestingCheckout"), "filtered out")
  }

  /// A URL dependency's identity is the URL's last component, and SwiftPM clones it into
  /// `.build/checkouts`: the plugin and its tool must build and run from there too. The
  /// repository is a fresh one holding this work tree's files (tracked and new, not the
  /// commits), so that the code under test is the code in the work tree.
  func testPluginRunsFromAPackageThatDependsOnThisOneByURL() throws {
    try requirePluginTest()
    let scratch = try ScratchDirectory("plugin-url")
    defer { scratch.remove() }
    let repository = scratch.url.appendingPathComponent("dealloctrace")
    try copyWorkTree(to: repository)
    try git(["init", "-q", "-b", "main"], in: repository)
    try git(["add", "-A"], in: repository)
    try git(["commit", "-q", "-m", "work tree under test"], in: repository)

    let package = scratch.url.appendingPathComponent("LeakyPackage")
    try FileManager.default.copyItem(
      at: Self.repository.appendingPathComponent("Tests/PluginFixtures/LeakyPackage"),
      to: package)
    let manifest = package.appendingPathComponent("Package.swift")
    let byPath = try String(contentsOf: manifest, encoding: .utf8)
    let byURL = byPath.replacingOccurrences(
      of: #".package(path: "../dealloctrace")"#,
      with: #".package(url: "\#(repository.absoluteString)", branch: "main")"#)
    XCTAssertNotEqual(byURL, byPath, "the fixture's path dependency was not found to replace")
    try byURL.write(to: manifest, atomically: true, encoding: .utf8)

    let gate = try swiftPackage([], in: package)
    XCTAssertEqual(gate.status, 1, gate.standardOutput)
    XCTAssertTrue(
      FileManager.default.fileExists(
        atPath: package.appendingPathComponent(".build/checkouts/dealloctrace").path),
      "SwiftPM cloned the URL dependency")
    XCTAssertTrue(gate.standardOutput.contains("FAIL  --max-leaked"), gate.standardOutput)
    XCTAssertTrue(
      gate.standardOutput.contains(
        "retain cycle: LeakyTests.XCTestCartModel.onChange → closure context"),
      "the XCTest leak's holders")
  }

  /// The files `git ls-files` knows or would add (tracked and untracked, ignored ones left
  /// out), copied as they are in the work tree.
  private func copyWorkTree(to destination: URL) throws {
    let list = try ChildProcess(
      URL(fileURLWithPath: "/usr/bin/env"),
      ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
      directory: Self.repository
    ).run(timeout: .seconds(120))
    XCTAssertEqual(list.status, 0, list.standardOutput)
    let files = list.standardOutput.split(separator: "\0").map(String.init)
    XCTAssertTrue(files.contains("Package.swift"), "git ls-files listed the package")
    for file in files {
      let source = Self.repository.appendingPathComponent(file)
      guard FileManager.default.fileExists(atPath: source.path) else { continue }  // deleted
      let target = destination.appendingPathComponent(file)
      try FileManager.default.createDirectory(
        at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.copyItem(at: source, to: target)
    }
  }
}

private struct GitFailed: Error, CustomStringConvertible {
  var description: String
}
