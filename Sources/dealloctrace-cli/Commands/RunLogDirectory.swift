import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The directory `run` records into: one `dealloctrace.<pid>.jsonl` per recorded process,
/// and one `refused.<pid>.txt` line per process whose preload refused to record.
enum RunLogDirectory {
  /// Makes the directory and returns its absolute path (a child may change its working
  /// directory): `given` must be missing or empty (an old log in it would be judged again);
  /// without it, a fresh `.dealloctrace/run-<time>-<pid>`.
  static func prepare(_ given: String?) throws(UsageError) -> String {
    let manager = FileManager.default
    let directory: String
    if let given {
      directory = given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
      if let entries = try? manager.contentsOfDirectory(atPath: directory), !entries.isEmpty {
        throw UsageError("--log \(given) is not empty; give a missing or empty directory")
      }
    } else {
      var now = time(nil)
      var parts = tm()
      gmtime_r(&now, &parts)
      let stamp = String(
        format: "%04d%02d%02d-%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1,
        parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
      directory = ".dealloctrace/run-\(stamp)-\(getpid())"
    }
    do {
      try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw UsageError("cannot create the log directory \(directory)")
    }
    return directory.hasPrefix("/") ? directory : manager.currentDirectoryPath + "/" + directory
  }

  static func hasLogs(_ directory: String) -> Bool {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return entries.contains { $0.hasSuffix(".jsonl") }
  }

  /// The refusal lines the preload left, one per process.
  static func refusals(in directory: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return entries.filter { $0.hasPrefix("refused.") }.sorted().compactMap {
      (try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }
  }
}
