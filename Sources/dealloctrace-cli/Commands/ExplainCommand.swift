import DeallocAnalysis
import DeallocLog

/// `dealloctrace explain LOG... (ID | 0xADDRESS | TypeName | id:FINDING)`: one object's
/// whole history, or those of a type's objects or of a finding's members.
enum ExplainCommand: Command {
  static let name = "explain"
  static let summary = "Show every record, timing and stack of one object, or of a type's objects."

  static let help = """
    USAGE: dealloctrace explain LOG... (ID | 0xADDRESS | TypeName | id:FINDING) [options]

    Prints the whole history of the objects the last argument selects: an object id (in
    every session), an address (every object that had it, and checks of it), a type name
    (fully qualified, or its last component), or a finding's id as every output prints it
    (`id:` and 12 hex digits; the prefix may be left out unless the digits are all
    decimal): the members the report keeps as its examples. For the id of a finding of
    the whole-process census (DEALLOCTRACE_LEAKS=1, checkpoints), its kind, members,
    cycle edges, tree and instances, and which censuses found it. Each record with its time and
    line, the verdict of each leak check, the timings and the enqueue stack.

    OPTIONS:
      --stuck-after DUR     as for report (default: 1s)
      -o, --output FILE     write to FILE instead of standard output
      --symbolize           resolve frames with llvm-symbolizer and swift-demangle
      --all-frames          list every frame of the enqueue stack as recorded (the
                            queue's and the tracer's marked); by default the program's
                            frames come first and the rest are folded into one line
      --library GLOB        a module whose census leaks are a library's (repeatable; as
                            for report)

    EXIT STATUS: 0 when something matched, 2 when nothing did, for unusable input or a
    usage error.
    """

  static let spec = Arguments.Spec(
    valued: ["--stuck-after": "stuck-after", "-o": "output", "--output": "output"].merging(
      LibraryOption.valued
    ) { $1 },
    flags: ["--symbolize": "symbolize", "--all-frames": "all-frames"],
    repeatable: [LibraryOption.name])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    guard parsed.positional.count >= 2, let target = parsed.positional.last else {
      throw UsageError("explain needs at least one LOG and an ID, 0xADDRESS or TypeName")
    }
    let stuckAfter =
      try parsed.value("stuck-after").map { (text) throws(AnalysisError) in
        try DurationParsing.nanoseconds(text)
      } ?? AnalysisOptions.defaultStuckAfter
    let (inputs, skipped) = try LogInput.resolveReporting(Array(parsed.positional.dropLast()))
    try Output.refuseInputs(outputs: [parsed.value("output")], inputs: inputs.compactMap(\.path))
    let symbolize = parsed.flag("symbolize")
    var selector = ObjectSelector(target)
    if let id = ObjectSelector.findingID(in: target) {
      var options = AnalysisOptions(stuckAfter: stuckAfter)
      options.libraryModules = try LibraryOption.globs(parsed)
      switch try findingSelector(
        id, inputs: (inputs, skipped), options: options, symbolize: symbolize,
        allFrames: parsed.flag("all-frames"))
      {
      case .members(let members): selector = members
      case .census(let text):
        try Output.write(text, to: parsed.value("output"))
        return .success
      }
    }
    var collector = ObjectHistoryCollector(
      selector, stuckAfter: stuckAfter,
      symbolizer: symbolize ? LLVMSymbolizer(launcher: selfExecutable) : nil)
    var reader = LogReader()
    for warning in skipped { collector.warn(warning) }
    try reader.read(inputs, into: &collector)
    Diagnostics.printWarnings(
      collector.warnings.map(\.description) + collector.symbolizationProblems,
      omitted: collector.omittedWarnings)
    guard !collector.histories.isEmpty else {
      throw NothingMatched("no object matches \(selector) in the logs")
    }
    var renderer = ExplainRenderer()
    renderer.allFrames = parsed.flag("all-frames")
    let text = renderer.render(
      collector.histories, selector: selector, omitted: collector.omitted)
    try Output.write(text, to: parsed.value("output"))
    return .success
  }

  /// What a finding id selects: the members of a finding of the queue's records, or the
  /// text of a census finding.
  private enum FindingMatch {
    case members(ObjectSelector)
    case census(String)
  }

  /// The finding with `id`, found by reading the logs as `report` does (with the same
  /// symbolization, which a finding's id depends on): its members, or, for a census
  /// finding, its explanation.
  private static func findingSelector(
    _ id: FindingID, inputs: (inputs: [LogInput], warnings: [LogWarning]),
    options: AnalysisOptions, symbolize: Bool, allFrames: Bool
  ) throws -> FindingMatch {
    let report = try DeallocAnalysis.analyze(
      inputs, options: options,
      symbolizer: symbolize ? LLVMSymbolizer(launcher: selfExecutable) : nil)
    // An id printed by a version before id rule 2 or 3 (an old report, CI log or baseline)
    // still names its finding; the output then says the finding's current id.
    let finding =
      report.findings.first { $0.id == id }
      ?? report.findings.first { $0.ruleOneID == id || $0.ruleTwoID == id }
    if let finding {
      return .members(.finding(finding.id, members: FindingMembers(finding)))
    }
    var census = CensusExplainRenderer()
    census.allFrames = allFrames
    if let text = census.render(id, in: report.census) {
      Diagnostics.printWarnings(report)
      return .census(text)
    }
    throw NothingMatched("no finding has id:\(id) in the logs")
  }
}

/// A query that matched nothing: exit 2, as for unusable input, so that a script that asks
/// about a finding or an object that is not there does not carry on as if it had an answer.
struct NothingMatched: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
