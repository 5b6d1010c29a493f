import DeallocAnalysis
import DeallocLog
import Foundation

/// `dealloctrace diff BASE HEAD`: what a pull request changes in the findings, against its
/// base branch's run; exits 1 when HEAD has findings BASE had not.
enum DiffCommand: Command {
  static let name = "diff"
  static let summary = "Compare two runs' findings (exit 1 when HEAD has new ones)."

  static let help = """
    USAGE: dealloctrace diff BASE HEAD [options]

    Compares the findings of two runs by their ids: which are new in HEAD, gone from it,
    or changed in count, and which false leaks (delayed deallocs) appeared or disappeared.
    Each of BASE and HEAD is a log, a directory of *.jsonl logs, or a JSON report saved by
    'dealloctrace report --format json' (told apart by content, not by name).

    OPTIONS:
      --format FORMAT       text, markdown (a PR comment or $GITHUB_STEP_SUMMARY) or json
                            (default: text)
      -o, --output FILE     write the diff to FILE instead of standard output
      --stuck-after DUR     the stuck threshold for sides read from logs (default: 1s)
      --symbolize           resolve frames of sides read from logs with llvm-symbolizer (use
                            the same setting on both sides: it can change a frame's name,
                            and so a finding's id)
      --library GLOB        a module whose census leaks are a library's, not the
                            program's (repeatable; matched against each type's module,
                            e.g. 'Vendor*'): a group whose every named type comes from
                            such modules or the toolchain is listed as a library leak

    Markdown names the inputs relative to $GITHUB_WORKSPACE, else $CI_PROJECT_DIR, else the
    current directory.

    EXIT STATUS:
      0  HEAD has no finding that BASE had not
      1  HEAD has new findings
      2  unusable input (a missing or unreadable side, a log or report of an unsupported
         version) or a usage error
    """

  static let spec = Arguments.Spec(
    valued: [
      "--format": "format", "-o": "output", "--output": "output", "--stuck-after": "stuck-after",
    ].merging(LibraryOption.valued) { $1 },
    flags: ["--symbolize": "symbolize"], repeatable: [LibraryOption.name])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    guard parsed.positional.count == 2 else {
      throw UsageError(
        "diff needs exactly two sides, BASE and HEAD, not \(parsed.positional.count)")
    }
    let format = parsed.value("format") ?? "text"
    guard ["text", "markdown", "json"].contains(format) else {
      throw UsageError("unknown format '\(format)'; use text, markdown, json")
    }
    guard parsed.positional.filter({ $0 == "-" }).count < 2 else {
      throw UsageError("only one side can be read from standard input")
    }
    var options = AnalysisOptions()
    if let text = parsed.value("stuck-after") {
      options.stuckAfter = try DurationParsing.nanoseconds(text)
    }
    options.libraryModules = try LibraryOption.globs(parsed)
    let symbolizer: (any FrameSymbolizer)? =
      parsed.flag("symbolize") ? LLVMSymbolizer(launcher: selfExecutable) : nil
    // Neither side (a log, a directory's logs, a saved report) may be the output.
    let sides = parsed.positional.flatMap { side in
      [side] + ((try? LogInput.resolve([side]))?.compactMap(\.path) ?? [])
    }
    try Output.refuseInputs(outputs: [parsed.value("output")], inputs: sides)
    let base = try DiffInput.read(
      parsed.positional[0], options: options, symbolizer: symbolizer,
      analyzed: Diagnostics.printWarnings)
    let head = try DiffInput.read(
      parsed.positional[1], options: options, symbolizer: symbolizer,
      analyzed: Diagnostics.printWarnings)
    let diff = FindingsDiff(base: base, head: head)
    let text: String
    switch format {
    case "markdown":
      text = DiffMarkdownRenderer(
        workspace: WorkspacePaths.fromEnvironment(
          ProcessInfo.processInfo.environment,
          currentDirectory: FileManager.default.currentDirectoryPath)
      ).render(diff)
    case "json": text = DiffJSONRenderer().render(diff)
    default: text = DiffTextRenderer().render(diff)
    }
    try Output.write(text, to: parsed.value("output"))
    return diff.hasNewFindings ? .gateFailed : .success
  }
}
