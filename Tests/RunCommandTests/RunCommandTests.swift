import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `dealloctrace run -- COMMAND`: the preloaded recorder in programs that never import this
/// package, run as real child processes.
@Suite struct RunCommandTests {
  /// A cycle in a plain program: the gate fails and names both types and the cycle.
  @Test func plainProgramLeakingACycleFailsTheGate() throws {
    let logs = try ScratchDirectory("run-cycle")
    defer { logs.remove() }
    let run = try RunCLI.run(["--log", logs.path, "--", RunCLI.built("PlainCycle").path, "cycle"])
    #expect(run.status == 1, "\(run.standardOutput)\n\(run.standardError)")
    #expect(run.standardOutput.contains("ROOT CYCLE: <PlainCycle.Apartment"))
    #expect(run.standardOutput.contains("<PlainCycle.Tenant"))
    #expect(
      run.standardOutput.contains(
        "cycle: PlainCycle.Apartment.tenant → PlainCycle.Tenant.home → PlainCycle.Apartment"))
  }

  /// The same program without the leak passes, and it was recorded (a census in its log).
  @Test func plainProgramWithoutLeakPasses() throws {
    let logs = try ScratchDirectory("run-clean")
    defer { logs.remove() }
    let run = try RunCLI.run(["--log", logs.path, "--", RunCLI.built("PlainCycle").path, "clean"])
    #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
    let records = try RunCLI.records(in: logs.path)
    #expect(records.count == 1, "one process, one log: \(records)")
    #expect(records.first?.filter { $0 == "census" }.count == 1)
  }

  /// `--no-gate` and a passing gate both give the command's own status.
  @Test func commandStatusPassesThrough() throws {
    let logs = try ScratchDirectory("run-status")
    defer { logs.remove() }
    let run = try RunCLI.run([
      "--log", logs.path, "--", RunCLI.built("PlainCycle").path, "exit-code", "3",
    ])
    #expect(run.status == 3, "\(run.standardError)")
    let leaking = try ScratchDirectory("run-no-gate")
    defer { leaking.remove() }
    let ungated = try RunCLI.run([
      "--no-gate", "--log", leaking.path, "--", RunCLI.built("PlainCycle").path, "cycle",
    ])
    #expect(ungated.status == 0, "\(ungated.standardError)")
    #expect(ungated.standardOutput.contains("ROOT CYCLE"))
  }

  /// A program that links DeallocTrace records through its own recorder: one log, one
  /// session, and no second census from the preload.
  @Test func programLinkingTheRecorderRecordsOnce() throws {
    let logs = try ScratchDirectory("run-linked")
    defer { logs.remove() }
    let run = try RunCLI.run([
      "--log", logs.path, "--", RunCLI.built("BaselineDemo").path, "session",
    ])
    let records = try RunCLI.records(in: logs.path)
    #expect(records.count == 1, "one log: \(records)\n\(run.standardError)")
    #expect(records.first?.filter { $0 == "session" }.count == 1)
    #expect(records.first?.contains("enqueue") == true, "the linked recorder wrote it")
    let censusTexts = run.standardError.components(separatedBy: "leaks for ").count - 1
    #expect(censusTexts <= 1, "\(run.standardError)")
    #expect(!run.standardError.contains("could not run"), "\(run.standardError)")
  }

  /// A command that is no Swift program runs unrecorded with one line saying why; with
  /// `--strict`, `run` exits 2.
  @Test func nonSwiftProgramIsRefusedInOneLine() throws {
    let logs = try ScratchDirectory("run-true")
    defer { logs.remove() }
    let run = try RunCLI.run(["--log", logs.path, "--", "/bin/true"])
    #expect(run.status == 0)
    #expect(run.standardError.contains("not recording in true: not a Swift program"))
    let strictLogs = try ScratchDirectory("run-true-strict")
    defer { strictLogs.remove() }
    let strict = try RunCLI.run(["--strict", "--log", strictLogs.path, "--", "/bin/true"])
    #expect(strict.status == 2, "\(strict.standardError)")
  }

  /// A static binary and a setuid program are refused before they run; they still run.
  @Test func staticAndSetuidProgramsAreRefused() throws {
    let logs = try ScratchDirectory("run-static")
    defer { logs.remove() }
    let copy = logs.file("setuid-PlainCycle")
    try FileManager.default.copyItem(atPath: RunCLI.built("PlainCycle").path, toPath: copy)
    #expect(chmod(copy, 0o4755) == 0)
    let setuid = try RunCLI.run(["--log", logs.file("a"), "--", copy, "exit-code", "4"])
    #expect(setuid.status == 4, "it still ran: \(setuid.standardError)")
    #expect(setuid.standardError.contains("is setuid or setgid"), "\(setuid.standardError)")
    let strict = try RunCLI.run(["--strict", "--log", logs.file("b"), "--", copy, "cycle"])
    #expect(strict.status == 2, "\(strict.standardError)")

    // `ldconfig` is a static binary on glibc distributions.
    let staticProgram = "/sbin/ldconfig"
    try #require(FileManager.default.fileExists(atPath: staticProgram), "no \(staticProgram)")
    let refusedStatic = try RunCLI.run(["--log", logs.file("c"), "--", staticProgram, "-p"])
    #expect(
      refusedStatic.standardError.contains("is a static binary"), "\(refusedStatic.standardError)")
  }

  /// `--only` leaves every process whose name does not match unrecorded.
  @Test func onlySelectsProcessesByName() throws {
    let logs = try ScratchDirectory("run-only")
    defer { logs.remove() }
    let run = try RunCLI.run([
      "--only", "Other*", "--log", logs.path, "--", RunCLI.built("PlainCycle").path, "cycle",
    ])
    #expect(run.status == 0, "nothing recorded, so the command's status: \(run.standardError)")
    #expect(try RunCLI.records(in: logs.path).isEmpty)
  }

  /// Usage errors: no `--`.
  @Test func usageErrors() throws {
    let noSeparator = try RunCLI.run([RunCLI.built("PlainCycle").path])
    #expect(noSeparator.status == 2)
    #expect(noSeparator.standardError.contains("needs '--'"))
  }

  /// `--alloc-stacks`: the report says where the leaked cycle was allocated, in
  /// `makePair(linked:)`, the program's frame first (the runtime's allocator left out).
  @Test func allocStacksNameTheAllocatingFunction() throws {
    let logs = try ScratchDirectory("run-alloc-stacks")
    defer { logs.remove() }
    let program = try RunCLI.built("PlainCycle").path
    let run = try RunCLI.run(["--alloc-stacks", "--log", logs.path, "--", program, "cycle"])
    #expect(run.status == 1, "\(run.standardOutput)\n\(run.standardError)")
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    let heading = try #require(lines.firstIndex { $0.hasSuffix("allocated at:") }, "\(lines)")
    let frames = lines[(heading + 1)...].prefix { $0.hasPrefix("      ") }
    #expect(frames.first?.contains("PlainCycle.") == true, "\(frames)")
    #expect(frames.contains { $0.contains("PlainCycle.makePair(linked: Swift.Bool)") }, "\(frames)")
  }

  /// Without `--alloc-stacks` the report has no allocation stack.
  @Test func noAllocStacksByDefault() throws {
    let logs = try ScratchDirectory("run-no-alloc-stacks")
    defer { logs.remove() }
    let run = try RunCLI.run(["--log", logs.path, "--", RunCLI.built("PlainCycle").path, "cycle"])
    #expect(run.status == 1, "\(run.standardError)")
    #expect(run.standardOutput.contains("ROOT CYCLE"))
    #expect(!run.standardOutput.contains("allocated at:"), "\(run.standardOutput)")
  }
}

/// Runs the built CLI's `run` command and reads what it recorded.
enum RunCLI {
  /// The directory of the built products (beside the test bundle).
  static let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent()

  static func built(_ product: String) throws -> URL {
    let url = products.appendingPathComponent(product)
    try #require(
      FileManager.default.isExecutableFile(atPath: url.path),
      "\(url.path) is not built; run `swift build --build-tests` first")
    return url
  }

  /// `dealloctrace run ARGUMENTS`, with the preload library checked to be built.
  static func run(
    _ arguments: [String], directory: URL? = nil, timeout: Duration = .seconds(120)
  ) throws -> ChildRun {
    let library = products.appendingPathComponent("libDeallocTracePreload.so").path
    try #require(
      FileManager.default.fileExists(atPath: library),
      "\(library) is not built; run `swift build --build-tests` first")
    return try ChildProcess(
      try built("dealloctrace"), ["run"] + arguments,
      environment: ChildEnvironment.inherited(clearing: ["LD_PRELOAD"]), directory: directory
    ).run(timeout: timeout)
  }

  /// The record kinds (`ev`) of each log in `directory`, one array per `*.jsonl` file.
  static func records(in directory: String) throws -> [[String]] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasSuffix(".jsonl") }.sorted()
    return try names.map { name in
      try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        .split(separator: "\n").compactMap { line in
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
          return (object as? [String: Any])?["ev"] as? String
        }
    }
  }

  /// Each log's `exe` (from its `session` record), for which processes were recorded.
  static func executables(in directory: String) throws -> [String] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasSuffix(".jsonl") }.sorted()
    return try names.flatMap { name in
      try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
        .split(separator: "\n").compactMap { line -> String? in
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
          guard let record = object as? [String: Any], record["ev"] as? String == "session"
          else { return nil }
          return record["exe"] as? String
        }
    }
  }
}

/// A program with DeallocQueue but not the recorder: the census cannot ask its queues, and
/// says so.
@Suite struct RunQueueWithoutRecorderTests {
  @Test func theCensusSaysQueuedObjectsMayShowAsLeaks() throws {
    let logs = try ScratchDirectory("run-queue-only")
    defer { logs.remove() }
    let run = try RunCLI.run([
      "--no-gate", "--log", logs.path, "--", RunCLI.built("QueueOnlyProbe").path,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(
      run.standardError.contains(
        "uses DeallocQueue without DeallocTrace: objects waiting in a queue at exit may show"
          + " as leaks"), "\(run.standardError)")
    let log = try #require(
      FileManager.default.contentsOfDirectory(atPath: logs.path).first { $0.hasSuffix(".jsonl") })
    let text = try String(contentsOfFile: logs.file(log), encoding: .utf8)
    #expect(text.contains("\"queues_unknown\":true"))
  }
}
