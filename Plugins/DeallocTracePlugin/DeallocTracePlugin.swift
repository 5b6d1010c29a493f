import Foundation
import PackagePlugin

/// `swift package dealloctrace`: builds the package's tests, runs them with tracing, holder
/// paths and the whole-process census on, writes the HTML report and gates
/// with `check`, whose verdict lists the findings with their holders and the census's cycles.
///
/// `PackageManager.test` cannot set environment variables for the tests, so the plugin runs
/// the built test product itself, once for XCTest and once for Swift Testing, as `swift test`
/// does. Everything it writes (the logs, the HTML report) stays under its work directory, so
/// it needs no permission to write into the package; the files named by `--junit`,
/// `--write-baseline` and the like are the user's.
@main
struct DeallocTracePlugin: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let options: PluginOptions
    do {
      options = try PluginOptions(parsing: arguments, relativeTo: context.package.directoryURL)
    } catch let error as PluginOptions.UsageError {
      Diagnostics.error(error.message)
      throw PluginFailure(status: 2)
    }
    if options.showHelp {
      print(PluginOptions.help)
      return
    }
    let tool = try context.tool(named: "dealloctrace-cli").url
    let runDirectory = context.pluginWorkDirectoryURL.appending(path: "run")
    let logDirectory = runDirectory.appending(path: "traces")
    try? FileManager.default.removeItem(at: runDirectory)
    try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)

    print("dealloctrace: building the tests of \(context.package.displayName)")
    let build = try packageManager.build(
      .all(includingTests: true), parameters: .init(configuration: .debug, logging: .concise))
    guard build.succeeded else {
      print(build.logText)
      Diagnostics.error("dealloctrace: the build failed")
      throw PluginFailure(status: 2)
    }
    let testProduct = try TestProductLocation.find(
      package: context.package.displayName, build: build,
      workDirectory: context.pluginWorkDirectoryURL)

    let runner = TestRunner(
      product: testProduct, filter: options.filter,
      environment: TracingEnvironment.adding(
        to: ProcessInfo.processInfo.environment, logDirectory: logDirectory))
    let testsPassed = try runner.runXCTest() && runner.runSwiftTesting()

    let html = runDirectory.appending(path: "report.html")
    _ = try ToolRun.run(tool, ["report", "--format", "html", "-o", html.path, logDirectory.path])
    let status = try ToolRun.run(tool, ["check", logDirectory.path] + options.checkArguments)
    print("dealloctrace: logs in \(logDirectory.path)")
    print("dealloctrace: HTML report in \(html.path)")
    if !testsPassed {
      Diagnostics.error("dealloctrace: some tests failed (their output is above)")
    }
    if status != 0 || !testsPassed {
      throw PluginFailure(status: status == 0 ? 1 : status)
    }
  }
}

/// Ends the command with a failure; SwiftPM prints it and exits with status 1.
struct PluginFailure: Error, CustomStringConvertible {
  var status: Int32
  var description: String { "dealloctrace: failed (status \(status))" }
}
