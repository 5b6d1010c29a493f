import Foundation
import TestSupport
import Testing

/// `dealloctrace run -- swift test` on a package that knows nothing of dealloctrace
/// (Fixtures/LeakyTests, whose XCTest test leaks a two-object cycle). One test, because
/// building the fixture package takes most of its time.
@Suite struct RunSwiftTestTests {
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/LeakyTests")

  @Test func swiftTestOfALeakingPackageFailsAndRecordsOnlyTheTestBundle() throws {
    let scratch = try ScratchDirectory("run-swift-test")
    defer { scratch.remove() }
    let package = scratch.url.appendingPathComponent("LeakyTests")
    try FileManager.default.copyItem(at: Self.fixture, to: package)
    let logs = scratch.file("logs")
    let run = try RunCLI.run(
      ["--log", logs, "--", "swift", "test"], directory: package, timeout: .seconds(600))
    #expect(run.status == 1, "\(run.standardOutput)\n\(run.standardError)")
    #expect(run.standardOutput.contains("Leaky.LeakyDocument"), "\(run.standardOutput)")
    #expect(run.standardOutput.contains("Leaky.LeakyEditor"), "\(run.standardOutput)")

    // Only the test bundle's processes (XCTest's run and Swift Testing's) were recorded:
    // no compiler, driver, build system, linker or manifest.
    let executables = try RunCLI.executables(in: logs)
    #expect(!executables.isEmpty)
    for executable in executables {
      #expect(executable.hasSuffix("LeakyTestsPackageTests.xctest"), "recorded \(executable)")
    }
  }
}
