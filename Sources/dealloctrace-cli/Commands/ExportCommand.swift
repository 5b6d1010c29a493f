import DeallocAnalysis
import DeallocLog

/// `dealloctrace export --format perfetto LOG... -o trace.json`: the logs as a timeline for
/// ui.perfetto.dev or chrome://tracing, written as the logs are read.
enum ExportCommand: Command {
  static let name = "export"
  static let summary = "Export the logs as a Perfetto / Chrome trace (one slice per object)."

  /// The formats, by `--format` name.
  static let formats = ["perfetto"]

  static let help = """
    USAGE: dealloctrace export LOG... [--format perfetto] [-o FILE] [options]

    Converts every session of every LOG (files, directories of *.jsonl, '-' for standard
    input) into Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
      - one async slice per object, named by its type, from enqueue to release (objects never
        released end at their session's last record, flagged 'unreleased' with their state);
      - a counter track of each queue's depth;
      - instants for marks, drains, checks (false or true leak), late deallocs and leaks;
      - one process per session (named after the program and its pid), named threads.
    Timestamps are microseconds since each session's start. The trace is written while the
    logs are read; memory follows the objects still queued, not the size of the logs.

    OPTIONS:
      --format FORMAT       perfetto (default: perfetto)
      -o, --output FILE     write the trace to FILE (replaced only once it is complete)
                            instead of standard output
      --stuck-after DUR     an unreleased object older than this, in a session without an end,
                            is flagged stuck rather than pending (default: 1s)

    EXIT STATUS: 0 when the trace was written, 2 for unusable input or a usage error.
    """

  static let spec = Arguments.Spec(
    valued: [
      "--format": "format", "--stuck-after": "stuck-after", "-o": "output", "--output": "output",
    ],
    flags: [:])

  static func run(_ arguments: [String]) throws -> ExitStatus {
    let parsed = try Arguments(arguments, spec: spec)
    let format = parsed.value("format") ?? "perfetto"
    guard formats.contains(format) else {
      throw UsageError("unknown format '\(format)'; use \(formats.joined(separator: ", "))")
    }
    var stuckAfter = AnalysisOptions.defaultStuckAfter
    if let text = parsed.value("stuck-after") {
      stuckAfter = try DurationParsing.nanoseconds(text)
    }
    // Resolve the inputs before creating the output, so a typo leaves no file behind.
    let (inputs, skipped) = try LogInput.resolveReporting(parsed.positional)
    try Output.refuseInputs(outputs: [parsed.value("output")], inputs: inputs.compactMap(\.path))
    let output = try FileTraceOutput(path: parsed.value("output"))
    var exporter = PerfettoExporter(output: output, stuckAfter: stuckAfter)
    var reader = LogReader()
    for warning in skipped { exporter.warn(warning) }
    // The trace is written as the log is read: no line drawn into it on a terminal.
    let progress = ProgressLine.forArguments(
      parsed.positional, streamsToTerminal: Output.isTerminal(parsed.value("output")))
    if let progress { reader.progress = { progress.update(bytesRead: $0) } }
    do {
      try reader.read(inputs, into: &exporter)
    } catch {
      progress?.finish()
      throw error
    }
    progress?.finish()
    try exporter.finish()
    Diagnostics.printWarnings(
      exporter.warnings.map(\.description), omitted: exporter.omittedWarnings)
    return .success
  }
}
