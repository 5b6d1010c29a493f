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
    let inputs = try LogInput.resolve(arguments)
    var reader = LogReader()
    var analyzer = Analyzer(options: options, symbolizer: symbolizer)
    try reader.read(inputs, into: &analyzer)
    return analyzer.finish(inputs: inputs.map(\.displayName))
  }
}
