import Foundation

/// The environment every child process of the tests starts from.
public enum ChildEnvironment {
  /// The variables that turn the recorder on or shape its log. Every child runner clears
  /// them, so that a traced test run never lends its log (or its settings) to a child; a
  /// test that wants a traced child sets them again.
  public static let tracingVariables = [
    "DEALLOCTRACE",
    "DEALLOCTRACE_LOG",
    "DEALLOCTRACE_FRAMES",
    "DEALLOCTRACE_HOLDERS",
    "DEALLOCTRACE_MAX_SIZE",
    "DEALLOCTRACE_LEAKS",
    "DEALLOCTRACE_PRELOAD",
    "DEALLOCTRACE_ONLY",
    "DEALLOCTRACE_RUN_PID",
  ]

  /// This process's environment without `tracingVariables` and `clearing`, plus `adding`.
  public static func inherited(
    clearing: [String] = [], adding: [String: String] = [:]
  ) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for name in tracingVariables + clearing {
      environment[name] = nil
    }
    environment.merge(adding) { _, new in new }
    return environment
  }
}
