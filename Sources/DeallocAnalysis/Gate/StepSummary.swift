import Foundation

/// Appends to GitHub's job summary file (`$GITHUB_STEP_SUMMARY`).
///
/// Why append: the runner gives every step the same file for the job and renders whatever
/// the steps appended, in order; truncating it would erase an earlier step's summary.
public enum StepSummary {
  /// Appends `markdown` to the file at `path`, creating it when missing.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)``.
  public static func append(_ markdown: String, to path: String) throws(AnalysisError) {
    let manager = FileManager.default
    if !manager.fileExists(atPath: path) {
      guard manager.createFile(atPath: path, contents: nil) else {
        throw .outputUnwritable(path: path, reason: "cannot create the file")
      }
    }
    guard let handle = FileHandle(forWritingAtPath: path) else {
      throw .outputUnwritable(path: path, reason: "cannot open it for writing")
    }
    defer { try? handle.close() }
    do {
      try handle.seekToEnd()
      try handle.write(contentsOf: Data(markdown.utf8))
    } catch {
      throw .outputUnwritable(path: path, reason: (error as NSError).localizedDescription)
    }
  }
}
