/// The analysis half of dealloctrace: reading v1 logs, deriving object states, rendering.
public enum DeallocAnalysis {
  /// The version of the dealloctrace tools.
  public static let toolVersion = "0.1.0"

  /// Reads `arguments` (files, directories of `*.jsonl`, `-` for standard input) and analyses
  /// every session in them: the one call the CLI's `report` and `check` need.
  ///
  /// - Throws: ``AnalysisError`` when the input is unusable. Problems that leave it usable
  ///   are ``Report/warnings``.
  public static func analyze(
    _ arguments: [String], options: AnalysisOptions = AnalysisOptions(),
    symbolizer: (any FrameSymbolizer)? = nil
  ) throws(AnalysisError) -> Report {
    try analyze(try LogInput.resolveReporting(arguments), options: options, symbolizer: symbolizer)
  }

  /// As ``analyze(_:options:symbolizer:)-(_,_,_)``, for inputs already resolved (a caller that
  /// checks them first, as the CLI does against its output paths); `warnings` (entries left
  /// out of a directory) join the report's.
  public static func analyze(
    _ resolved: (inputs: [LogInput], warnings: [LogWarning]),
    options: AnalysisOptions = AnalysisOptions(), symbolizer: (any FrameSymbolizer)? = nil
  ) throws(AnalysisError) -> Report {
    var reader = LogReader()
    var analyzer = Analyzer(options: options, symbolizer: symbolizer)
    for warning in resolved.warnings { analyzer.warn(warning) }
    try reader.read(resolved.inputs, into: &analyzer)
    return analyzer.finish(inputs: resolved.inputs.map(\.displayName))
  }
}
