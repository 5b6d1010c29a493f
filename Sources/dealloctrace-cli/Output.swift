import DeallocAnalysis
import Foundation

/// Where a command's result goes: standard output, or the file named by `-o`.
enum Output {
  /// Writes `text` to `path`, or to standard output when `path` is `nil` or `-`.
  static func write(_ text: String, to path: String?) throws(AnalysisError) {
    guard let path, path != "-" else {
      FileHandle.standardOutput.write(Data(text.utf8))
      return
    }
    do {
      try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    } catch {
      let reason = (error as NSError).localizedDescription
      throw .outputUnwritable(path: path, reason: reason)
    }
  }
}
