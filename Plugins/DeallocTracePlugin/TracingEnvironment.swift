import Foundation

/// The environment the tests run with: the log directory (one log per test process), holder
/// paths and the whole-process census.
enum TracingEnvironment {
  static func adding(to environment: [String: String], logDirectory: URL) -> [String: String] {
    var environment = environment
    environment["DEALLOCTRACE_LOG"] = logDirectory.path + "/"
    environment["DEALLOCTRACE_HOLDERS"] = "1"
    environment["DEALLOCTRACE_LEAKS"] = "1"
    return environment
  }
}
