import DeallocLog
import Foundation
import TextEscaping

/// Appends to GitHub's job summary file (`$GITHUB_STEP_SUMMARY`).
///
/// Why append: the runner gives every step the same file for the job and renders whatever
/// the steps appended, in order; truncating it would erase an earlier step's summary.
///
/// Why a cap: GitHub refuses a step summary over 1 MiB (``maximumBytes``) and shows none of
/// it, so a report of thousands of findings would leave the job with no summary at all.
/// Past the cap the text is cut at a line break, any open code fence and `<details>` are
/// closed, and a note says where the full report is. The trade-off: the cut may fall in the
/// middle of a section; the note says so.
public enum StepSummary {
  /// GitHub's documented limit for one step's summary.
  public static let maximumBytes = 1 << 20

  /// Appends `markdown`, cut to ``maximumBytes``, to the file at `path`, creating it when
  /// missing. `fullReport` is the command that prints the uncut report, for the note that a
  /// cut adds.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)``.
  public static func append(_ markdown: String, to path: String, fullReport: String? = nil)
    throws(AnalysisError)
  {
    let text = capped(markdown, fullReport: fullReport)
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
      try handle.write(contentsOf: Data(text.utf8))
    } catch {
      throw .outputUnwritable(path: path, reason: (error as NSError).localizedDescription)
    }
  }

  /// `markdown` itself when it fits in ``maximumBytes``, else its first lines, closed, with
  /// a note; the result never exceeds ``maximumBytes``.
  static func capped(_ markdown: String, fullReport: String?) -> String {
    let utf8 = Array(markdown.utf8)
    guard utf8.count > maximumBytes else { return markdown }
    let note =
      "\n> **dealloctrace:** the report was cut here: GitHub shows at most 1 MiB of a step"
      + " summary. "
      + (fullReport.map { "Run `\(Escaping.markdownCode($0))` for all of it." }
        ?? "Run `dealloctrace report --format markdown` on the same logs for all of it.")
      + "\n"
    // Room for the note and for closing a fence and a few <details>.
    let budget = maximumBytes - note.utf8.count - 64
    var end = budget
    while end > 0 && utf8[end - 1] != 0x0A { end -= 1 }
    var kept = String(decoding: utf8[..<end], as: UTF8.self)
    let lines = kept.split(separator: "\n", omittingEmptySubsequences: false)
    let fences = lines.filter { $0.trimmingPrefix(while: \.isWhitespace).hasPrefix("```") }.count
    if fences % 2 == 1 { kept += "```\n" }
    let open = lines.filter { $0.contains("<details>") }.count
    let closed = lines.filter { $0.contains("</details>") }.count
    kept += String(repeating: "</details>\n", count: min(3, max(0, open - closed)))
    return kept + note
  }
}
