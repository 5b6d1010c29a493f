import DeallocAnalysis
import DeallocLog
import Foundation

/// `dealloctrace check LOG...`: the CI gate. Reads the logs as `report` does, sets aside
/// suppressed findings, and exits 1 when any threshold is exceeded.
enum CheckCommand: Command {
  static let name = "check"
  static let summary = "Gate CI on leaked, stuck and truly leaking objects (exit 1 when exceeded)."

  static let help = """
    USAGE: dealloctrace check LOG... [options]

    Reads every session of every LOG exactly as 'report' does (files, directories of
    *.jsonl, '-' for standard input), sets aside the findings a suppressions file covers,
    and compares what is left with the thresholds. Prints a short verdict: each threshold's
    count against its limit, by how much it was exceeded, and the top findings; suppressed
    findings are listed apart with their reasons, and suppressions that matched nothing
    are listed so they don't rot.

    THRESHOLDS (N is a count, or 'unlimited'):
      --max-leaked N            objects the queue released that something else still held
                                to the end of their session (default: 0)
      --max-stuck N             objects still queued, older than --stuck-after, in a session
                                without an end (default: 0)
      --max-true-leaks N        leak checks that saw an object alive outside any queue
                                (default: 0)
      --max-never-released N    objects still queued when their session ended
                                (default: unlimited)
      --max-process-leaks N     leak groups (ROOT CYCLE, ROOT LEAK) of the program in the
                                last whole-process census of each session (a process);
                                library leaks never count (default: 0; judged only when the
                                log holds a census)
      --max-growing-types N     types of the program whose live count rose at every one
                                of 3 or more censuses of one checkpoint label
                                (DeallocTrace.checkpoint) (default: 0)
      --max-library-leaks N     leak groups of the libraries (the toolchain's, and modules
                                named by --library) in that census (default: not judged)
      --stuck-after DUR         the stuck threshold (default: 1s; e.g. 250ms, 2.5s)

    BASELINE (adopting the gate where findings already exist):
      --write-baseline FILE     record every finding that counts (after suppressions; the
                                census's program findings included) with
                                its id, count, kind, type and frames, as sorted JSON to
                                commit; the verdict is then judged against it (or against
                                --baseline, when given)
      --baseline FILE           judge against a recorded baseline: a finding counts only when
                                its id is not in it, or by how much its count grew past it;
                                known findings are listed apart, and entries no longer found
                                are listed as fixed (remove them from the baseline)

    OPTIONS:
      --suppressions FILE       findings to leave out, one per line:
                                  type:GLOB [reason]    matched against the type name
                                  frame:GLOB [reason]   matched against the enqueue stack's
                                                        symbols (any frame)
                                  id:HASH [reason]      one finding, by the id every output
                                                        prints
                                GLOB: * any run, ? one character, [a-z] [!a-z] one of a set,
                                \\ escapes; quote a pattern with spaces or '#': frame:"a b*".
                                '#' starts a comment: a whole line, or the reason after a
                                space; an unquoted '#' inside a pattern is an error
      --junit FILE              also write JUnit XML: suite 'dealloctrace', one test case per
                                threshold and per finding signature (file and line when a
                                frame has them; see --symbolize); '-' for standard output,
                                which then needs -o FILE for the verdict
      --github                  also print GitHub Actions annotations (::error, ::warning;
                                at most 10 of each, most serious first) and, when
                                $GITHUB_STEP_SUMMARY is set, append the verdict and the
                                Markdown report to that file. The annotations go to standard
                                output after the text verdict, or to standard error when
                                standard output carries JSON or JUnit (--format json without
                                -o, or --junit -), so that it stays parseable; the runner
                                reads annotations from both. With --baseline, known
                                findings and fixed entries are ::notice annotations
      --library GLOB            a module whose census leaks are a library's, not the
                                program's (repeatable; matched against each type's module,
                                e.g. 'Vendor*'): a group whose every named type comes from
                                such modules or the toolchain is a library leak
      --format FORMAT           the verdict as text or json (default: text)
      -o, --output FILE         write the verdict to FILE instead of standard output
      --symbolize               resolve file:line of frames with llvm-symbolizer and
                                swift-demangle found on PATH; the binaries named in the log
                                must still be where they ran
      --all-frames              list every frame of each stack as recorded in the verdict,
                                the JUnit file, the annotations and the step summary; by
                                default the program's frames come first and the test
                                framework's, libdispatch's, the runtime's and the
                                compiler's thunks are folded into one line

    EXIT STATUS:
      0  every threshold held
      1  a threshold was exceeded
      2  unusable input (no log, unreadable file, unsupported log version, bad suppressions
         file, missing, unreadable or newer baseline) or a usage error

    File paths in the JUnit file, the annotations and the step summary are relative to
    $GITHUB_WORKSPACE, else $CI_PROJECT_DIR, else the current directory.
    """

  static let spec = Arguments.Spec(
    valued: [
      "--max-leaked": "max-leaked", "--max-stuck": "max-stuck",
      "--max-true-leaks": "max-true-leaks", "--max-never-released": "max-never-released",
      "--stuck-after": "stuck-after", "--suppressions": "suppressions", "--junit": "junit",
      "--format": "format", "-o": "output", "--output": "output", "--baseline": "baseline",
      "--write-baseline": "write-baseline", "--max-process-leaks": "max-process-leaks",
      "--max-growing-types": "max-growing-types", "--max-library-leaks": "max-library-leaks",
    ].merging(LibraryOption.valued) { $1 },
    flags: ["--github": "github", "--symbolize": "symbolize", "--all-frames": "all-frames"],
    repeatable: [LibraryOption.name])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    let thresholds = try thresholds(parsed)
    let destinations = try Destinations(parsed)
    let suppressions = try parsed.value("suppressions").map {
      (path) throws(AnalysisError) in try SuppressionList.load(path: path)
    }
    // Read before anything is written: --baseline and --write-baseline may name one file.
    let baseline = try parsed.value("baseline").map {
      (path) throws(AnalysisError) in try Baseline.load(path: path)
    }

    let started = ContinuousClock.now
    let environment = ProcessInfo.processInfo.environment
    let summaryPath = parsed.flag("github") ? environment["GITHUB_STEP_SUMMARY"] : nil
    let report = try readLogs(parsed, destinations: destinations, summaryPath: summaryPath)
    let elapsed = ContinuousClock.now - started
    try baseline?.checkKinds(
      against: report.findings, census: report.census.programGroups)
    Diagnostics.printWarnings(report)

    let gate = Gate(
      thresholds: thresholds, suppressions: suppressions ?? SuppressionList(), baseline: baseline)
    let result = try evaluate(report, gate, writingBaselineTo: parsed.value("write-baseline"))
    if let baseline { adviseRewriting(baseline, fixed: result.fixedBaselineEntries.count) }
    let workspace = WorkspacePaths.fromEnvironment(
      environment, currentDirectory: FileManager.default.currentDirectoryPath)
    let allFrames = parsed.flag("all-frames")
    var text = GateTextRenderer()
    text.allFrames = allFrames
    let verdict =
      destinations.format == "json" ? GateJSONRenderer().render(result) : text.render(result)
    try Output.write(verdict, to: destinations.output)

    if let path = destinations.junit {
      try writeJUnit(
        result, elapsed: elapsed, workspace: workspace, allFrames: allFrames, to: path)
    }
    if parsed.flag("github") {
      try writeGitHub(
        result, report, workspace: workspace, destinations: destinations,
        summaryPath: summaryPath, logs: parsed.positional, allFrames: allFrames)
    }
    return result.passed ? .success : .gateFailed
  }

  /// Where the verdict, the JUnit file and the annotations go, checked before any log is
  /// read so that a usage error costs nothing.
  private struct Destinations {
    /// `text` or `json`.
    var format: String
    /// The verdict's file; `nil` or `-` is standard output.
    var output: String?
    /// The JUnit file; `-` is standard output.
    var junit: String?
    /// Annotations must not corrupt a JSON verdict or a JUnit file on standard output; the
    /// GitHub runner reads workflow commands from standard error as well.
    var annotationsToStandardError: Bool

    init(_ parsed: Arguments) throws(UsageError) {
      format = parsed.value("format") ?? "text"
      guard format == "text" || format == "json" else {
        throw UsageError("unknown format '\(format)'; use text, json")
      }
      output = parsed.value("output")
      junit = parsed.value("junit")
      let verdictOnStandardOutput = Output.isStandardOutput(output)
      let junitOnStandardOutput = junit == "-"
      if junitOnStandardOutput && verdictOnStandardOutput {
        throw UsageError(
          "--junit - and the verdict cannot both go to standard output; add -o FILE")
      }
      if let output, let junit, !verdictOnStandardOutput, Output.sameFile(output, junit) {
        throw UsageError(
          "-o and --junit name the same file; the JUnit file would replace the verdict")
      }
      annotationsToStandardError =
        junitOnStandardOutput || (format == "json" && verdictOnStandardOutput)
    }
  }

  /// The thresholds the options set, the others at their defaults.
  private static func thresholds(_ parsed: Arguments) throws(UsageError) -> GateThresholds {
    var thresholds = GateThresholds()
    for threshold in GateThresholds.Threshold.allCases {
      if let text = parsed.value(threshold.optionName) {
        thresholds[threshold] = try limit(text, option: threshold.optionName)
      }
    }
    if let text = parsed.value(ProcessLeakResult.optionName) {
      thresholds.maxProcessLeaks = try limit(text, option: ProcessLeakResult.optionName)
    }
    if let text = parsed.value(GrowingTypesResult.optionName) {
      thresholds.maxGrowingTypes = try limit(text, option: GrowingTypesResult.optionName)
    }
    if let text = parsed.value(LibraryLeakResult.optionName) {
      thresholds.maxLibraryLeaks = try limit(text, option: LibraryLeakResult.optionName)
    }
    return thresholds
  }

  /// Reads the logs as `report` does, refusing any output that is also an input first.
  private static func readLogs(
    _ parsed: Arguments, destinations: Destinations, summaryPath: String?
  ) throws -> Report {
    // No output may be an input; --write-baseline may be the --baseline it replaces.
    let suppressionsPath = parsed.value("suppressions").map { [$0] } ?? []
    if let writeBaseline = parsed.value("write-baseline") {
      try Output.refuseInputs(
        outputs: [writeBaseline],
        inputs: try LogInput.resolve(parsed.positional).compactMap(\.path) + suppressionsPath)
    }
    return try ReportCommand.analyze(
      parsed, outputs: [destinations.output, destinations.junit, summaryPath],
      otherInputs: suppressionsPath + (parsed.value("baseline").map { [$0] } ?? []))
  }

  /// The gate's result. With --write-baseline, records the result as a baseline first and,
  /// when no --baseline was given, judges again against what it recorded.
  private static func evaluate(
    _ report: Report, _ gate: Gate, writingBaselineTo path: String?
  ) throws -> GateResult {
    let result = gate.evaluate(report)
    guard let path else { return result }
    let recorded = Baseline(recording: result, path: path)
    try recorded.write()
    StandardError.line(
      "wrote \(recorded.entries.count) findings"
        + " (\(recorded.entries.reduce(0) { $0 + $1.count }) objects) to the baseline \(path)",
      command: name)
    guard gate.baseline == nil else { return result }
    var judged = gate
    judged.baseline = recorded
    return judged.evaluate(report)
  }

  /// Says once, when a baseline of an older id rule has entries that matched nothing, that
  /// it should be rewritten: its queue entries were mapped to the current rule, but a census
  /// entry's id, or an entry edited by hand, cannot be.
  private static func adviseRewriting(_ baseline: Baseline, fixed: Int) {
    guard baseline.writtenByOldRule, fixed > 0 else { return }
    StandardError.line(
      "the baseline \(baseline.path) was written with finding id rule \(baseline.idRule)"
        + " (this dealloctrace uses rule \(FindingID.rule)) and \(fixed) of its entries match"
        + " no finding, perhaps only by their old ids; rewrite it with"
        + " 'dealloctrace check LOGS --write-baseline \(baseline.path)'",
      command: name)
  }

  /// Writes the JUnit XML, timed by how long reading and analysing the logs took.
  private static func writeJUnit(
    _ result: GateResult, elapsed: Duration, workspace: WorkspacePaths, allFrames: Bool,
    to path: String
  ) throws {
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    var junit = JUnitRenderer(time: seconds)
    junit.workspace = workspace
    junit.allFrames = allFrames
    try Output.write(junit.render(result), to: path)
  }

  /// Prints the GitHub annotations and, when the runner gives a step summary file, appends
  /// the verdict and the Markdown report to it.
  private static func writeGitHub(
    _ result: GateResult, _ report: Report, workspace: WorkspacePaths,
    destinations: Destinations, summaryPath: String?, logs: [String], allFrames: Bool
  ) throws {
    var github = GitHubRenderer(
      workspace: workspace.root, currentDirectory: workspace.currentDirectory)
    github.allFrames = allFrames
    let annotations = github.render(result)
    if destinations.annotationsToStandardError {
      try StandardError.write(annotations)
    } else {
      try Output.write(annotations, to: nil)
    }
    guard let summaryPath, !summaryPath.isEmpty else { return }
    var markdown = MarkdownRenderer()
    markdown.workspace = workspace
    markdown.allFrames = allFrames
    try StepSummary.append(
      GateMarkdownRenderer(workspace: workspace).render(result) + "\n" + markdown.render(report)
        + "\n",
      to: summaryPath,
      fullReport: "dealloctrace report --format markdown " + logs.joined(separator: " "))
  }

  /// A threshold's value: a count, or `unlimited`.
  private static func limit(_ text: String, option: String) throws(UsageError) -> Int? {
    if text == "unlimited" { return nil }
    guard let value = Int(text), value >= 0 else {
      throw UsageError("--\(option) needs a count (0 or more) or 'unlimited', not '\(text)'")
    }
    return value
  }
}
