import DeallocAnalysis
import DeallocLog

/// `dealloctrace explain LOG... (ID | 0xADDRESS | TypeName)`: one object's whole history.
enum ExplainCommand: Command {
  static let name = "explain"
  static let summary = "Show every record, timing and stack of one object, or of a type's objects."

  static let help = """
    USAGE: dealloctrace explain LOG... (ID | 0xADDRESS | TypeName) [options]

    Prints the whole history of the objects the last argument selects: an object id (in
    every session), an address (every object that had it, and checks of it), or a type
    name (fully qualified, or its last component). Each record with its time and line,
    the verdict of each leak check, the timings and the enqueue stack.

    OPTIONS:
      --stuck-after DUR     as for report (default: 1s)
      -o, --output FILE     write to FILE instead of standard output
      --symbolize           resolve frames with llvm-symbolizer and swift-demangle

    EXIT STATUS: 0 when the logs were read (whether or not anything matched), 2 for
    unusable input or a usage error.
    """

  static let spec = Arguments.Spec(
    valued: ["--stuck-after": "stuck-after", "-o": "output", "--output": "output"],
    flags: ["--symbolize": "symbolize"])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    guard parsed.positional.count >= 2, let target = parsed.positional.last else {
      throw UsageError("explain needs at least one LOG and an ID, 0xADDRESS or TypeName")
    }
    let selector = ObjectSelector(target)
    let stuckAfter =
      try parsed.value("stuck-after").map { (text) throws(AnalysisError) in
        try DurationParsing.nanoseconds(text)
      } ?? AnalysisOptions.defaultStuckAfter
    let (inputs, skipped) = try LogInput.resolveReporting(Array(parsed.positional.dropLast()))
    try Output.refuseInputs(outputs: [parsed.value("output")], inputs: inputs.compactMap(\.path))
    var collector = ObjectHistoryCollector(
      selector, stuckAfter: stuckAfter,
      symbolizer: parsed.flag("symbolize") ? LLVMSymbolizer(launcher: selfExecutable) : nil)
    var reader = LogReader()
    for warning in skipped { collector.warn(warning) }
    try reader.read(inputs, into: &collector)
    Diagnostics.printWarnings(
      collector.warnings.map(\.description) + collector.symbolizationProblems,
      omitted: collector.omittedWarnings)
    let text = ExplainRenderer().render(
      collector.histories, selector: selector, omitted: collector.omitted)
    try Output.write(text, to: parsed.value("output"))
    return .success
  }
}
