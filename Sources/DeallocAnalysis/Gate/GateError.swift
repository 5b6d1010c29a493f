/// What makes a gate unusable: a suppressions file that cannot be read or has a bad line.
///
/// Why a second error type in this module: ``AnalysisError`` belongs to the reading half and
/// is maintained with it; the gate's errors keep the same shape (one line, `file:line` first)
/// so the CLI treats both alike: exit status 2 and the description on standard error.
public enum GateError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The suppressions file does not exist or cannot be read.
  case suppressionsUnreadable(path: String, reason: String)
  /// A line of the suppressions file is not `type:GLOB` or `frame:GLOB` (with an optional
  /// reason), or its glob does not compile.
  case badSuppression(file: String, line: Int, message: String)
  /// A gate output (the JUnit file, the step summary) could not be written.
  case outputUnwritable(path: String, reason: String)

  public var description: String {
    switch self {
    case .suppressionsUnreadable(let path, let reason):
      return "\(path): cannot read the suppressions: \(reason)"
    case .badSuppression(let file, let line, let message):
      return "\(file):\(line): \(message)"
    case .outputUnwritable(let path, let reason):
      return "\(path): cannot write: \(reason)"
    }
  }
}
