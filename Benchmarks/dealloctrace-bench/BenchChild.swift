import Foundation

/// The variables that turn tracing or holder paths on: a child starts without them, so that
/// only what a figure asks for is on.
let tracingVariables = ["DEALLOCTRACE_LOG", "DEALLOCTRACE", "DEALLOCTRACE_HOLDERS"]

/// This process's environment without ``tracingVariables``, then `extra` on top.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
  var result = ProcessInfo.processInfo.environment
  for name in tracingVariables { result[name] = nil }
  return result.merging(extra) { $1 }
}

/// Runs this executable as a child with `arguments` and `extra` in its environment
/// (``childEnvironment(_:)``); its standard output, trimmed, or nil when it failed.
///
/// Why children: some figures belong to a process of its own, the recorder's (it lives as
/// long as its process), the runtime hooks' (set at start) and a report's peak memory (in
/// the bench's process, what its earlier groups left resident counted too).
func runBenchChild(_ arguments: [String], environment extra: [String: String] = [:]) -> String? {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  process.arguments = arguments
  process.environment = childEnvironment(extra)
  let output = Pipe()
  process.standardOutput = output
  guard (try? process.run()) != nil else { return nil }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { return nil }
  return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
