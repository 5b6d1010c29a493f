import DeallocLog

/// The analysis half of dealloctrace: reading v1 logs, deriving object states, rendering.
public enum DeallocAnalysis {
  /// The version of the dealloctrace tools.
  public static let toolVersion = "0.1.0"

  /// Reads `arguments` (files, directories of `*.jsonl`, `-` for standard input) and analyses
  /// every session in them: the one call the CLI's `report` and `check` need.
  ///
  /// - Throws: ``AnalysisError`` when the input is unusable. Problems that leave it usable
  ///   are ``Report/warnings``.
  /// - Parameter progress: called with the bytes read so far, after each chunk (see
  ///   ``LogReader/progress``).
  public static func analyze(
    _ arguments: [String], options: AnalysisOptions = AnalysisOptions(),
    symbolizer: (any FrameSymbolizer)? = nil, progress: ((Int) -> Void)? = nil
  ) throws(AnalysisError) -> Report {
    try analyze(
      try LogInput.resolveReporting(arguments), options: options, symbolizer: symbolizer,
      progress: progress)
  }

  /// As ``analyze(_:options:symbolizer:progress:)-(_,_,_,_)``, for inputs already resolved (a
  /// caller that checks them first, as the CLI does against its output paths); `warnings`
  /// (entries left out of a directory) join the report's.
  ///
  /// Inputs of ``PipelinedVisitor/minimumBytes`` or more are analysed on a second thread
  /// while this one reads and parses (see ``PipelinedVisitor``); the report is the same.
  public static func analyze(
    _ resolved: (inputs: [LogInput], warnings: [LogWarning]),
    options: AnalysisOptions = AnalysisOptions(), symbolizer: (any FrameSymbolizer)? = nil,
    progress: ((Int) -> Void)? = nil
  ) throws(AnalysisError) -> Report {
    var reader = LogReader()
    reader.progress = progress
    var analyzer = Analyzer(options: options, symbolizer: symbolizer)
    for warning in resolved.warnings { analyzer.warn(warning) }
    if PipelinedVisitor<Analyzer>.pays(for: resolved.inputs) {
      var pipelined = PipelinedVisitor(analyzer)
      do {
        try reader.read(resolved.inputs, into: &pipelined)
      } catch {
        // The visitor's error, if it threw, came from an earlier line: the one to report.
        _ = try pipelined.finish()
        throw error
      }
      analyzer = try pipelined.finish()
    } else {
      try reader.read(resolved.inputs, into: &analyzer)
    }
    return analyzer.finish(inputs: resolved.inputs.map(\.displayName))
  }
}
