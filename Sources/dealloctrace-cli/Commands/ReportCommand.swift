import DeallocAnalysis
import DeallocLog
import Foundation

/// `dealloctrace report LOG...`: the report in the chosen format.
enum ReportCommand: Command {
  static let name = "report"
  static let summary = "Report pending, stuck, never released and leaked objects, and false leaks."

  /// The formats, by `--format` name. Adding one is one line here.
  static let renderers: [(name: String, renderer: any ReportRenderer)] = [
    ("text", TextRenderer()),
    ("json", JSONRenderer()),
    ("markdown", MarkdownRenderer()),
    ("html", HTMLRenderer()),
  ]

  static var help: String {
    """
    USAGE: dealloctrace report LOG... [options]

    Reads every session of every LOG (files, directories of *.jsonl, '-' for standard input)
    and reports each object's state, the leak checks that were false leaks (delayed
    deallocs) or true leaks, latency, peak queue depth and a per-type table.

    OPTIONS:
      --format FORMAT       \(renderers.map(\.name).joined(separator: ", ")) (default: text)
      --stuck-after DUR     an unreleased object older than this, in a session without an end,
                            is stuck (default: 1s; e.g. 250ms, 2.5s)
      -o, --output FILE     write the report to FILE instead of standard output
      --symbolize           resolve file:line (and names) of frames that carry mod+off, with
                            llvm-symbolizer and swift-demangle found on PATH
      --all-frames          list every frame of each stack as recorded; by default the
                            program's frames come first and the test framework's,
                            libdispatch's, the runtime's and the compiler's thunks are
                            folded into one line ('… 14 frames of XCTest and libdispatch')
      --library GLOB        a module whose census leaks are a library's, not the
                            program's (repeatable; matched against each type's module,
                            e.g. 'Vendor*'): a group whose every named type comes from
                            such modules or the toolchain is listed as a library leak

    EXIT STATUS: 0 when a report was produced (with findings or without), 2 for unusable
    input or a usage error.
    """
  }

  static let spec = Arguments.Spec(
    valued: [
      "--format": "format", "--stuck-after": "stuck-after", "-o": "output", "--output": "output",
    ].merging(LibraryOption.valued) { $1 },
    flags: ["--symbolize": "symbolize", "--all-frames": "all-frames"],
    repeatable: [LibraryOption.name])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    let format = parsed.value("format") ?? "text"
    guard var renderer = renderers.first(where: { $0.name == format })?.renderer else {
      throw UsageError(
        "unknown format '\(format)'; use \(renderers.map(\.name).joined(separator: ", "))")
    }
    let allFrames = parsed.flag("all-frames")
    if var markdown = renderer as? MarkdownRenderer {
      // For a pull-request comment: source paths relative to the checkout.
      markdown.workspace = WorkspacePaths.fromEnvironment(
        ProcessInfo.processInfo.environment,
        currentDirectory: FileManager.default.currentDirectoryPath)
      markdown.allFrames = allFrames
      renderer = markdown
    } else if var text = renderer as? TextRenderer {
      text.allFrames = allFrames
      renderer = text
    } else if var html = renderer as? HTMLRenderer {
      html.allFrames = allFrames
      renderer = html
    }
    let report = try analyze(parsed, outputs: [parsed.value("output")])
    if format != "text" || parsed.value("output") != nil {
      Diagnostics.printWarnings(report)
    }
    try Output.write(report, as: renderer, to: parsed.value("output"))
    return .success
  }

  /// Reads the logs named by `parsed` with the options every reading command shares
  /// (`--stuck-after`, `--symbolize`), after refusing any of `outputs` (and `otherInputs`,
  /// such as a suppressions file) that is one of the inputs. `check` uses it too.
  static func analyze(_ parsed: Arguments, outputs: [String?], otherInputs: [String] = [])
    throws -> Report
  {
    var options = AnalysisOptions()
    if let text = parsed.value("stuck-after") {
      options.stuckAfter = try DurationParsing.nanoseconds(text)
    }
    options.libraryModules = try LibraryOption.globs(parsed)
    let symbolizer: (any FrameSymbolizer)? =
      parsed.flag("symbolize") ? LLVMSymbolizer(launcher: selfExecutable) : nil
    let resolved = try LogInput.resolveReporting(parsed.positional)
    try Output.refuseInputs(
      outputs: outputs, inputs: resolved.inputs.compactMap(\.path) + otherInputs)
    let progress = ProgressLine.forArguments(parsed.positional)
    defer { progress?.finish() }
    return try DeallocAnalysis.analyze(
      resolved, options: options, symbolizer: symbolizer,
      progress: progress.map { line in { line.update(bytesRead: $0) } })
  }
}
