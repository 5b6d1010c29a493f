import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing
import TextEscaping

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 12, items 8–14: the CLI never hangs, never eats the machine, never destroys a log
/// and never lets input reach a terminal or a CI runner raw. Each test runs the built
/// `dealloctrace` as a child process against files, FIFOs, links and fake tools made for it,
/// and each failed before its fix.
@Suite struct CLIHardeningTests {
  // MARK: - Item 8: --symbolize trusts nothing the log names

  @Test func symbolizeHandsOnlyRegularFilesToTheSymbolizer() throws {
    let scratch = try Scratch()
    let record = scratch.path("symbolizer-arguments")
    let tools = try scratch.fakeSymbolizer("printf '%s\\n' \"$@\" >> '\(record)'; echo '[]'")
    let fifo = scratch.path("module.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let regular = scratch.path("module.bin")
    try Data("not really ELF".utf8).write(to: URL(fileURLWithPath: regular))
    let log = try scratch.log(
      stackModules: [
        "/dev/zero", fifo, regular, "/proc/self/mem", scratch.path("tools"),
        "/dev/zero\u{1B}]0;owned\u{7}\n::error::x",
      ])

    let run = try CLIRun.run(
      ["report", "--format", "json", "--symbolize", log],
      environment: ["PATH": tools + ":/usr/bin:/bin"], timeout: .seconds(60))

    #expect(run.status == 0)
    let handed = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
    #expect(handed.contains("--obj=\(regular)"))
    #expect(!handed.contains("/dev/zero"))
    #expect(!handed.contains(fifo))
    #expect(!handed.contains("/proc/self/mem"))
    #expect(!handed.contains("--obj=\(scratch.path("tools"))"))
    #expect(run.standardError.contains("--symbolize: /dev/zero is not a regular file"))
    // The hostile module path is escaped on standard error like any other input.
    #expect(!run.standardError.contains("\u{1B}"))
    #expect(!run.errorLines.contains { $0.hasPrefix("::") })
  }

  @Test func symbolizerRunsUnderMemoryAndCPULimits() throws {
    let scratch = try Scratch()
    let limits = scratch.path("limits")
    let tools = try scratch.fakeSymbolizer(
      "{ ulimit -v; ulimit -t; } > '\(limits)'; echo '[]'")
    let module = scratch.path("module.bin")
    try Data("x".utf8).write(to: URL(fileURLWithPath: module))
    let log = try scratch.log(stackModules: [module])

    let run = try CLIRun.run(
      ["report", "--symbolize", log], environment: ["PATH": tools + ":/usr/bin:/bin"],
      timeout: .seconds(60))

    #expect(run.status == 0)
    let lines = try String(contentsOfFile: limits, encoding: .utf8).split(separator: "\n")
    // `ulimit -v` is in KiB: 4 GiB; `ulimit -t` in seconds.
    #expect(
      lines == ["\(BoundedChild.Limits().memoryBytes / 1024)", "\(BoundedChild.Limits().seconds)"])
  }

  @Test func symbolizerDiesWithTheCLI() throws {
    let scratch = try Scratch()
    let pidFile = scratch.path("symbolizer.pid")
    let tools = try scratch.fakeSymbolizer(
      "echo $$ > '\(pidFile).tmp'; mv '\(pidFile).tmp' '\(pidFile)'; exec sleep 600")
    let module = scratch.path("module.bin")
    try Data("x".utf8).write(to: URL(fileURLWithPath: module))
    let log = try scratch.log(stackModules: [module])

    let cli = try ChildProcess(
      CLIRun.executable, ["report", "--symbolize", log],
      environment: ChildEnvironment.inherited(adding: ["PATH": tools + ":/usr/bin:/bin"]),
      standardError: .discarded
    ).start()
    let symbolizer = try #require(
      waitFor { (try? String(contentsOfFile: pidFile, encoding: .utf8)) }
        .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    defer { kill(symbolizer, SIGKILL) }
    cli.stop()

    let gone = waitFor { Self.isGone(symbolizer) ? true : nil } ?? false
    #expect(gone, "llvm-symbolizer (pid \(symbolizer)) outlived the dealloctrace that ran it")
  }

  @Test func aSymbolizerPastItsDeadlineIsKilled() throws {
    let scratch = try Scratch()
    let tools = try scratch.fakeSymbolizer("exec sleep 600")
    let outcome = BoundedChild.run(
      tools + "/llvm-symbolizer", [], limits: BoundedChild.Limits(seconds: 1))
    #expect(outcome == .timedOut)
  }

  // MARK: - Item 9: one bad entry in a directory stops nothing

  @Test func aDirectoryWithAFIFOALinkLoopAndASubdirectoryReadsTheGoodLogs() throws {
    let scratch = try Scratch()
    let directory = scratch.path("logs")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: CLIRun.root.appendingPathComponent("fixtures/feed.jsonl").path,
      toPath: directory + "/good.jsonl")
    #expect(mkfifo(directory + "/fifo.jsonl", 0o600) == 0)
    #expect(symlink("loop.jsonl", directory + "/loop.jsonl") == 0)
    try FileManager.default.createDirectory(
      atPath: directory + "/sub.jsonl", withIntermediateDirectories: true)

    let run = try CLIRun.run(
      [
        "check", "--max-leaked", "unlimited", "--max-true-leaks", "unlimited", "--max-stuck",
        "unlimited", directory,
      ], timeout: .seconds(60))

    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput.contains("read 1 session"))
    #expect(run.standardError.contains("\(directory)/fifo.jsonl: a FIFO, not a log file"))
    #expect(
      run.standardError.contains("\(directory)/loop.jsonl: too many levels of symbolic links"))
    #expect(run.standardError.contains("\(directory)/sub.jsonl: a directory, not a log file"))

    // Nothing left to read: one line that says why, exit 2.
    try FileManager.default.removeItem(atPath: directory + "/good.jsonl")
    let empty = try CLIRun.run(["report", directory], timeout: .seconds(60))
    #expect(empty.status == 2)
    #expect(empty.errorLines.count == 1)
    #expect(
      empty.standardError.contains("\(directory): cannot read: no *.jsonl entry is a log file"))
  }

  @Test func logLikeFilesADirectoryInputDoesNotReadAreNamed() throws {
    let scratch = try Scratch()
    let directory = scratch.path("logs")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let feed = CLIRun.root.appendingPathComponent("fixtures/feed.jsonl").path
    try FileManager.default.copyItem(atPath: feed, toPath: directory + "/run.jsonl")
    try FileManager.default.copyItem(atPath: feed, toPath: directory + "/run.jsonl.4242")
    try FileManager.default.copyItem(atPath: feed, toPath: directory + "/dealloctrace.log")
    try Data().write(to: URL(fileURLWithPath: directory + "/notes.txt"))
    try Data().write(to: URL(fileURLWithPath: directory + "/dealloctrace.html"))

    let run = try CLIRun.run([
      "check", "--max-leaked", "unlimited", "--max-true-leaks", "unlimited", "--max-stuck",
      "unlimited", directory,
    ])

    #expect(run.status == 0)
    #expect(
      run.standardError.contains("\(directory)/run.jsonl.4242: looks like a dealloctrace log"))
    #expect(
      run.standardError.contains("\(directory)/dealloctrace.log: looks like a dealloctrace log"))
    #expect(!run.standardError.contains("notes.txt"))
    #expect(!run.standardError.contains("dealloctrace.html"))
  }

  /// Root reads files whatever their mode, so as root the CLI runs as `nobody` (through
  /// util-linux's `setpriv`), which it cannot do elsewhere.
  @Test(
    .enabled(
      if: geteuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
  func aPermissionErrorSaysPermissionDeniedAndSkipsOnlyThatLog() throws {
    let scratch = try Scratch()
    let feed = CLIRun.root.appendingPathComponent("fixtures/feed.jsonl").path
    let locked = scratch.path("locked")
    try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: feed, toPath: locked + "/run.jsonl")
    chmod(locked, 0)
    defer { chmod(locked, 0o700) }
    let logs = scratch.path("logs")
    try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: feed, toPath: logs + "/a.jsonl")
    try FileManager.default.copyItem(atPath: feed, toPath: logs + "/b.jsonl")
    chmod(logs + "/b.jsonl", 0)

    let named = try Self.runUnprivileged(["report", locked + "/run.jsonl"])
    #expect(named.status == 2)
    #expect(named.standardError.contains("\(locked)/run.jsonl: cannot read: permission denied"))
    #expect(!named.standardError.contains("no such file"))

    let directory = try Self.runUnprivileged([
      "check", "--max-leaked", "unlimited", "--max-true-leaks", "unlimited", "--max-stuck",
      "unlimited", logs,
    ])
    #expect(directory.status == 0, "\(directory.standardError)")
    #expect(directory.standardError.contains("\(logs)/b.jsonl: permission denied; skipped"))
    #expect(directory.standardOutput.contains("read 1 session"))
  }

  private static let setpriv = "/usr/bin/setpriv"

  /// Runs the CLI as it is, or as `nobody` when this process is root.
  private static func runUnprivileged(_ arguments: [String]) throws -> ChildRun {
    guard geteuid() == 0 else { return try CLIRun.run(arguments) }
    return try CLIRun.run(
      ["--reuid=65534", "--regid=65534", "--clear-groups", CLIRun.executable.path] + arguments,
      executable: URL(fileURLWithPath: setpriv))
  }

  // MARK: - Item 10: an output never overwrites an input, nor is left half-written

  @Test func anOutputThatIsAnInputIsRefused() throws {
    let scratch = try Scratch()
    let log = scratch.path("run.jsonl")
    try FileManager.default.copyItem(
      atPath: CLIRun.root.appendingPathComponent("fixtures/feed.jsonl").path, toPath: log)
    let original = try Data(contentsOf: URL(fileURLWithPath: log))
    #expect(symlink(log, scratch.path("link.txt")) == 0)
    #expect(link(log, scratch.path("hard.txt")) == 0)
    try Data("type:Nothing\n".utf8).write(to: URL(fileURLWithPath: scratch.path("out.txt")))

    for arguments in [
      ["report", log, "-o", log],
      ["report", log, "-o", scratch.path("link.txt")],
      ["report", log, "-o", scratch.path("hard.txt")],
      ["report", scratch.path(""), "-o", scratch.path(".//run.jsonl")],
      ["check", log, "-o", scratch.path("out.txt"), "--junit", log],
      ["check", log, "-o", scratch.path("out.txt"), "--suppressions", scratch.path("out.txt")],
      ["export", log, "-o", log],
      ["diff", log, log, "-o", log],
      ["check", log, "--write-baseline", log],
      ["explain", log, "1", "-o", log],
    ] {
      let run = try CLIRun.run(arguments)
      #expect(run.status == 2, "\(arguments)")
      #expect(run.standardError.contains("refusing to overwrite a log"), "\(arguments)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: log)) == original, "\(arguments)")
    }
  }

  @Test func theVerdictAndTheJUnitFileCannotBeOneFile() throws {
    let scratch = try Scratch()
    let run = try CLIRun.run([
      "check", "fixtures/feed.jsonl", "-o", scratch.path("x.xml"), "--junit",
      scratch.path("./x.xml"),
    ])
    #expect(run.status == 2)
    #expect(run.standardError.contains("-o and --junit name the same file"))
    #expect(!FileManager.default.fileExists(atPath: scratch.path("x.xml")))
  }

  @Test func aFailedWriteLeavesTheOldReportWhole() throws {
    let scratch = try Scratch()
    let output = scratch.path("report.json")
    try Data("old report\n".utf8).write(to: URL(fileURLWithPath: output))
    // A 4 KiB file size limit: the JSON report of the recorded demo is ten times that.
    let run = try CLIRun.run(
      [
        "-c", "ulimit -f 8; exec \"$0\" \"$@\"", CLIRun.executable.path, "report",
        "--format", "json", "fixtures/recorded-feed-demo.jsonl", "-o", output,
      ], executable: URL(fileURLWithPath: "/bin/sh"))

    #expect(run.status == 2, "\(run.standardError)")
    #expect(run.standardError.contains("\(output): cannot write"))
    #expect(try String(contentsOfFile: output, encoding: .utf8) == "old report\n")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path(""))
    #expect(leftovers == ["report.json"])
  }

  @Test func anOutputThroughALinkReplacesTheFileItNames() throws {
    let scratch = try Scratch()
    let real = scratch.path("real.txt")
    try Data("old report\n".utf8).write(to: URL(fileURLWithPath: real))
    #expect(symlink(real, scratch.path("link.txt")) == 0)

    let run = try CLIRun.run(["report", "fixtures/feed.jsonl", "-o", scratch.path("link.txt")])

    #expect(run.status == 0)
    let destination = try FileManager.default.destinationOfSymbolicLink(
      atPath: scratch.path("link.txt"))
    #expect(destination == real)
    #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("dealloctrace report"))
  }

  // MARK: - Item 11: a BOM, and a version that is not a number

  @Test func aByteOrderMarkIsSkipped() throws {
    let scratch = try Scratch()
    let log = scratch.path("bom.jsonl")
    var bytes = Data([0xEF, 0xBB, 0xBF])
    bytes += try Data(contentsOf: CLIRun.root.appendingPathComponent("fixtures/feed.jsonl"))
    try bytes.write(to: URL(fileURLWithPath: log))

    let run = try CLIRun.run(["report", "--format", "json", log])

    #expect(run.status == 0, "\(run.standardError)")
    #expect(!run.standardError.contains("malformed"))
  }

  @Test(arguments: [#""1""#, "1.5", "1e300", "true", "-1"])
  func aVersionThatIsNotASmallIntegerHasItsOwnMessage(_ version: String) throws {
    let scratch = try Scratch()
    let log = scratch.path("v.jsonl")
    try Data(
      (#"{"ev":"session","v":\#(version),"t":0,"pid":1}"# + "\n" + #"{"ev":"end","t":1}"# + "\n")
        .utf8
    ).write(to: URL(fileURLWithPath: log))

    let run = try CLIRun.run(["report", log])

    #expect(run.status == 2)
    #expect(run.errorLines.count == 1)
    #expect(
      run.standardError.contains(
        "\(log):1: the session record's 'v' (the log version) must be a small integer"))
  }

  // MARK: - Item 13: input reaches no stream raw

  @Test func hostileInputIsEscapedOnStandardError() throws {
    let scratch = try Scratch()
    let name = scratch.path("evil\n::stop-commands::x\u{1B}[31m\u{202E}.jsonl")
    try Data(
      [
        #"{"ev":"session","v":1,"t":0,"pid":1}"#,
        #"{"ev":"odd\n::error::pwned\u001b]0;title\u0007\u202e","t":1}"#,
        #"{"ev":"end","t":2}"#,
      ].joined(separator: "\n").utf8
    ).write(to: URL(fileURLWithPath: name))

    for arguments in [
      ["check", name], ["report", "--format", "json", name],
      ["export", name, "-o", scratch.path("trace.json")],
      ["explain", name, "1"], ["report", name + ".missing"],
    ] {
      let run = try CLIRun.run(arguments)
      #expect(!run.standardError.contains("\u{1B}"), "\(arguments)")
      #expect(!run.standardError.contains("\u{202E}"), "\(arguments)")
      #expect(!run.errorLines.contains { $0.hasPrefix("::") }, "\(arguments)")
      #expect(run.standardError.contains(#"\u{1B}"#), "\(arguments)")
    }
  }

  // MARK: - Item 14: records after the end, and undefined stacks

  @Test func recordsAfterTheEndAndUndefinedStacksAreWarnedAboutWithTheirLine() throws {
    let scratch = try Scratch()
    let log = scratch.path("late.jsonl")
    try Data(
      [
        #"{"ev":"session","v":1,"t":0,"pid":1}"#,
        #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"A","q":"q","stack":9}"#,
        #"{"ev":"release","t":2,"id":1,"freed":true}"#,
        #"{"ev":"end","t":3,"why":"exit"}"#,
        #"{"ev":"mark","t":4,"label":"late"}"#,
        #"{"ev":"mark","t":5,"label":"later"}"#,
      ].joined(separator: "\n").utf8
    ).write(to: URL(fileURLWithPath: log))

    let run = try CLIRun.run(["check", log])

    #expect(run.status == 0)
    #expect(
      run.standardError.contains(
        "\(log):2: enqueue names stack 9, which no earlier 'stack' record defines"))
    #expect(run.standardError.contains("\(log):5: 2 record(s) after the session's 'end' (line 4)"))
  }

  // MARK: - Helpers

  /// Polls `probe` every 50 ms for up to 30 s (a bound on a wait, not a timing assertion).
  private func waitFor<T>(_ probe: () -> T?) -> T? {
    for _ in 0..<600 {
      if let value = probe() { return value }
      usleep(50_000)
    }
    return nil
  }

  /// Whether `pid` has exited (gone, or a zombie waiting for its new parent to reap it).
  private static func isGone(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
      return true
    }
    guard let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
  }
}

/// A temporary directory for one test, removed at the end.
private final class Scratch {
  let root: String

  init() throws {
    root = try ScratchDirectory("hardening").path
    // Searchable by others: the unprivileged runs (as `nobody`) read the logs inside.
    chmod(root, 0o755)
  }

  deinit {
    chmod(root, 0o700)
    try? FileManager.default.removeItem(atPath: root)
  }

  func path(_ name: String) -> String { root + "/" + name }

  /// A directory holding a fake `llvm-symbolizer` shell script with `body`.
  func fakeSymbolizer(_ body: String) throws -> String {
    let directory = path("tools")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let script = directory + "/llvm-symbolizer"
    try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: script))
    chmod(script, 0o755)
    return directory
  }

  /// A log with one leaked object whose stack has one frame in each of `stackModules`.
  func log(stackModules: [String]) throws -> String {
    let frames = stackModules.enumerated().map { index, module in
      #"{"ip":"0x\#(index + 1)","mod":\#(Escaping.json(module)),"off":"0x10"}"#
    }
    let lines = [
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"x","frames":8}"#,
      #"{"ev":"stack","id":1,"frames":[\#(frames.joined(separator: ","))]}"#,
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"A","q":"q","stack":1}"#,
      #"{"ev":"release","t":2,"id":1,"freed":false,"rc":1}"#,
      #"{"ev":"end","t":3,"why":"exit"}"#,
    ]
    let log = path("symbolize.jsonl")
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: log))
    return log
  }
}
