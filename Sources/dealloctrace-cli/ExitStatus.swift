import DeallocAnalysis
import DeallocLog

/// The CLI's exit statuses, and the one place where errors become them.
enum ExitStatus: Int32 {
  /// A report was produced (with findings or without), or a gate passed.
  case success = 0
  /// A gate's threshold was exceeded.
  case gateFailed = 1
  /// The input was unusable, or the command line was wrong.
  case unusable = 2

  /// The status and the one-line message for an error thrown by a command.
  static func of(_ error: any Error) -> (status: ExitStatus, message: String) {
    switch error {
    case let error as AnalysisError: return (.unusable, error.description)
    case let error as UsageError: return (.unusable, "\(error.description); see --help")
    default: return (.unusable, "\(error)")
    }
  }
}
