import Foundation

/// Runs a program with the plugin's standard output and error, and returns its exit status.
enum ToolRun {
  static func run(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil
  ) throws -> Int32 {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Runs a program and returns its standard output (its standard error passes through).
  static func output(_ executable: URL, _ arguments: [String]) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }
}
