/// A subcommand of `dealloctrace`.
///
/// Implementation requirements: parse with ``Arguments``, do the work through the library,
/// write results with ``Output``, and throw (``UsageError``, `AnalysisError`) rather than
/// print errors: `main.swift` maps every error to its exit status in one place.
protocol Command {
  /// The word after `dealloctrace`.
  static var name: String { get }
  /// One line for the command list.
  static var summary: String { get }
  /// The full `--help` text.
  static var help: String { get }
  /// Runs the command with the arguments after its name.
  static func run(_ arguments: [String]) throws -> ExitStatus
}
