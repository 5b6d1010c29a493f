import DeallocLog
import Foundation

/// Reads one side of `dealloctrace diff`, deciding by content whether it is logs or a saved
/// JSON report.
///
/// Why by content: CI artifacts are renamed freely (`report.json`, `base.jsonl`), so the
/// name proves nothing. A log's first line is a complete record (`{"ev":…}`); a report
/// starts with a line holding only `{` (as `report --format json` and `jq` print it) or,
/// compact, with a whole object that has `reportVersion`. Directories and `-` are logs.
public enum DiffInput {
  /// How many bytes are read to decide; a log's first record is far shorter.
  static let sniffLength = 64 * 1024

  /// The side at `argument`; `analyzed` sees the report of a side read from logs (for its
  /// warnings).
  /// - Throws: ``AnalysisError`` when it is neither usable logs nor a usable report.
  public static func read(
    _ argument: String, options: AnalysisOptions = AnalysisOptions(),
    symbolizer: (any FrameSymbolizer)? = nil, analyzed: (Report) -> Void = { _ in }
  ) throws(AnalysisError) -> DiffSide {
    if argument != "-", isSavedReport(argument) {
      guard let data = FileManager.default.contents(atPath: argument),
        let text = String(data: data, encoding: .utf8)
      else {
        throw .inputUnreadable(path: argument, reason: "permission denied, I/O error or not UTF-8")
      }
      return try DiffSide.parseSavedReport(
        text, path: argument, libraryModules: options.libraryModules)
    }
    let report = try DeallocAnalysis.analyze([argument], options: options, symbolizer: symbolizer)
    analyzed(report)
    return DiffSide(report)
  }

  /// Whether the regular file at `path` starts like a JSON report rather than a log.
  static func isSavedReport(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path)
    else { return false }
    defer { try? handle.close() }
    guard let head = try? handle.read(upToCount: sniffLength) else { return false }
    let bytes = Array(head)
    let firstLine = bytes.prefix { $0 != 0x0A }
    let trimmed = String(decoding: firstLine, as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed == "{" { return true }
    guard let value = try? JSONParser.parse(trimmed) else { return false }
    return value["reportVersion"] != nil
  }
}
