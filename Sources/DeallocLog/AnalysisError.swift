import TextEscaping

/// Everything that makes the analysis input or output unusable, with a one-line description.
///
/// Why one enum: the CLI maps every case to an exit status in one place, and every message
/// names the file (and line, when there is one) so that a user can go straight to the cause.
/// Problems that leave the input usable (a malformed line, a cut-off tail) are not errors:
/// they are ``LogWarning``s and the report is still produced.
///
/// Not closed: new unusable inputs add cases. A `switch` over it outside this package should
/// have a `default:`; the CLI switches exhaustively on purpose, so that each new case gets
/// its exit status.
public enum AnalysisError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The input path does not exist.
  case inputNotFound(path: String)
  /// The input exists but could not be opened or read.
  case inputUnreadable(path: String, reason: String)
  /// The input file holds no bytes at all.
  case inputEmpty(path: String)
  /// A directory given as input holds no `*.jsonl` file.
  case noLogsInDirectory(path: String)
  /// The input has no `session` record, so none of its records can be placed in a session.
  case noSession(path: String)
  /// A `session` record declares a log version this reader does not know.
  case unsupportedVersion(path: String, line: Int, version: String)
  /// A `session` record's `v` is not a small integer.
  case invalidVersion(path: String, line: Int, found: String)
  /// An output path names one of the inputs (the same file, perhaps through a link).
  case outputIsInput(output: String, input: String)
  /// No input was named.
  case noInput
  /// A duration option could not be read (`1s`, `250ms`, `2.5s` are valid).
  case invalidDuration(String)
  /// The report, or a gate output (the JUnit file, the step summary), could not be written.
  case outputUnwritable(path: String, reason: String)
  /// The gate's suppressions file does not exist or cannot be read.
  case suppressionsUnreadable(path: String, reason: String)
  /// A line of the suppressions file is not `type:GLOB` or `frame:GLOB` (with an optional
  /// reason), or its glob does not compile.
  case badSuppression(file: String, line: Int, message: String)
  /// The baseline (`check --baseline`) does not exist or cannot be read.
  case baselineUnreadable(path: String, reason: String)
  /// The baseline is not JSON, or not a baseline's shape; `line` when the JSON is broken.
  case badBaseline(path: String, line: Int?, message: String)
  /// The baseline was written by a newer dealloctrace, in a format this one cannot read;
  /// `supported` is the newest version this one reads.
  case unsupportedBaselineVersion(path: String, version: Int64, supported: Int)
  /// A saved `report --format json` given to `diff` is not JSON or not a report's shape.
  case badSavedReport(path: String, line: Int?, message: String)

  public var description: String {
    switch self {
    case .inputNotFound(let path):
      return "\(path): no such file or directory"
    case .inputUnreadable(let path, let reason):
      return "\(path): cannot read: \(reason)"
    case .inputEmpty(let path):
      return "\(path): empty log (no records)"
    case .noLogsInDirectory(let path):
      return "\(path): directory holds no *.jsonl log"
    case .noSession(let path):
      return "\(path): no 'session' record; is this a dealloctrace log?"
    case .unsupportedVersion(let path, let line, let version):
      return
        "\(path):\(line): log version \(version) is not supported (this dealloctrace reads v1);"
        + " upgrade dealloctrace"
    case .invalidVersion(let path, let line, let found):
      return
        "\(path):\(line): the session record's 'v' (the log version) must be a small integer"
        + " such as 1, not \(found)"
    case .outputIsInput(let output, let input):
      return "\(output): is the input \(input); refusing to overwrite a log with its own report"
    case .noInput:
      return "no log given; pass files, directories or '-' for standard input"
    case .invalidDuration(let text):
      return "invalid duration '\(text)'; use a number with a unit: 1s, 250ms, 2.5s, 500us"
    case .outputUnwritable(let path, let reason):
      return "\(path): cannot write: \(reason)"
    case .suppressionsUnreadable(let path, let reason):
      return "\(path): cannot read the suppressions: \(reason)"
    case .badSuppression(let file, let line, let message):
      return "\(file):\(line): \(message)"
    case .baselineUnreadable(let path, let reason):
      return "\(path): cannot read the baseline: \(reason)"
    case .badBaseline(let path, let line, let message):
      return "\(path)\(line.map { ":\($0)" } ?? ""): not a dealloctrace baseline: "
        + Escaping.terminal(message)
    case .unsupportedBaselineVersion(let path, let version, let supported):
      return
        "\(path): baseline version \(version) is newer than this dealloctrace reads"
        + " (\(supported)); upgrade dealloctrace, or write the baseline again with this one"
    case .badSavedReport(let path, let line, let message):
      return "\(path)\(line.map { ":\($0)" } ?? ""): not a dealloctrace JSON report: "
        + Escaping.terminal(message)
    }
  }
}
