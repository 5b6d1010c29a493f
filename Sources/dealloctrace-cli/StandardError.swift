import DeallocAnalysis
import DeallocLog
import TextEscaping

#if canImport(Glibc)
  import Glibc
#endif

/// The CLI's one writer to standard error.
///
/// Why one: there were three (one ignored short writes, one escaped nothing), and every
/// message can carry input (a file name, a type, an unknown `ev`). ``line(_:)`` is for
/// diagnostics: it escapes the whole message with ``Escaping/terminal(_:)``, so that it stays
/// one line (a `\n::stop-commands::` in a file name cannot become a GitHub workflow command)
/// and sends no escape sequence to a terminal, and a failure to write it is ignored (there is
/// nowhere left to report it). ``write(_:)`` is for output already escaped for its own format
/// (workflow commands), and fails like any output.
enum StandardError {
  /// Writes `dealloctrace: MESSAGE` (or `dealloctrace COMMAND: MESSAGE`) and a line break.
  static func line(_ message: String, command: String? = nil) {
    let prefix = command.map { "dealloctrace \(Escaping.terminal($0)): " } ?? "dealloctrace: "
    var text = prefix + Escaping.terminal(message) + "\n"
    _ = text.withUTF8 { Output.writeAll($0, to: 2, path: "<stderr>") }
  }

  /// Writes `text` as it is.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)``.
  static func write(_ text: String) throws(AnalysisError) {
    var text = text
    if let failure = text.withUTF8({ Output.writeAll($0, to: 2, path: "<stderr>") }) {
      throw failure
    }
  }
}
