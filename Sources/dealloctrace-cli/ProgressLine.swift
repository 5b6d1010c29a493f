import DeallocAnalysis
import DeallocLog
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A progress line on standard error while `report`, `check` or `export` read a big input:
/// bytes read of the total, and the rate.
///
/// Why only sometimes: a second-long report needs no progress, and a line rewritten with
/// `\r` is noise in a CI log or a redirected file. So it shows only when standard error is a
/// terminal, neither `NO_COLOR` nor `CI` is set (non-empty, as no-color.org defines "set"),
/// and the inputs are regular files totalling more than ``minimumInputBytes``: standard input
/// and FIFOs have no total to show progress against. The trade-off: a slow pipe gets no
/// progress at all.
final class ProgressLine {
  /// Inputs at or below this size read in well under a second: no line.
  static let minimumInputBytes = 100_000_000
  /// Redraws at most this often, so that drawing costs nothing next to reading.
  static let redrawInterval = 0.1

  private let totalBytes: Int
  private let write: (String) -> Void
  private let start: Double
  private var lastDrawn = -Double.infinity
  private var drawn = false

  init(totalBytes: Int, write: @escaping (String) -> Void) {
    self.totalBytes = totalBytes
    self.write = write
    self.start = Self.now()
  }

  /// Whether to show a line, from the facts it depends on (injected, for tests).
  /// `streamsToTerminal`: the command writes its output while it reads, to a terminal (as
  /// `export` does to standard output): a line redrawn there would land inside the output.
  static func isWanted(
    standardErrorIsTerminal: Bool, environment: [String: String], totalBytes: Int?,
    streamsToTerminal: Bool = false
  ) -> Bool {
    guard standardErrorIsTerminal, !streamsToTerminal, let totalBytes,
      totalBytes > minimumInputBytes
    else { return false }
    for name in ["NO_COLOR", "CI"] where !(environment[name] ?? "").isEmpty { return false }
    return true
  }

  /// The line for the named inputs, when one is wanted in this process; `streamsToTerminal`
  /// as ``isWanted(standardErrorIsTerminal:environment:totalBytes:streamsToTerminal:)`` says.
  static func forArguments(_ arguments: [String], streamsToTerminal: Bool = false)
    -> ProgressLine?
  {
    let total = totalBytes(of: arguments)
    guard
      isWanted(
        standardErrorIsTerminal: isatty(2) == 1, environment: ProcessInfo.processInfo.environment,
        totalBytes: total, streamsToTerminal: streamsToTerminal)
    else { return nil }
    // Numbers and our own `\r` and erase sequence only: no input reaches the terminal.
    return ProgressLine(totalBytes: total!) { try? StandardError.write($0) }
  }

  /// The total size of the inputs the arguments name, or `nil` when one is not a regular
  /// file (standard input, a FIFO) or cannot be resolved (the reader reports that).
  static func totalBytes(of arguments: [String]) -> Int? {
    guard let inputs = try? LogInput.resolve(arguments) else { return nil }
    var total = 0
    for input in inputs {
      guard let path = input.path else { return nil }
      var info = stat()
      guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
      total += Int(info.st_size)
    }
    return total
  }

  /// Reports `bytesRead` so far; redraws when the last drawing is old enough.
  func update(bytesRead: Int) {
    let now = Self.now()
    guard now - lastDrawn >= Self.redrawInterval else { return }
    lastDrawn = now
    drawn = true
    write("\r" + Self.text(bytesRead: bytesRead, totalBytes: totalBytes, seconds: now - start))
  }

  /// Clears the line, so that what follows starts at the left margin.
  func finish() {
    if drawn { write("\r\u{1B}[K") }
  }

  /// The text of the line, e.g. `reading 512 MB of 1084 MB (47 %), 640 MB/s`.
  static func text(bytesRead: Int, totalBytes: Int, seconds: Double) -> String {
    let read = bytesRead / 1_000_000
    let total = totalBytes / 1_000_000
    let percent = totalBytes > 0 ? bytesRead * 100 / totalBytes : 100
    let rate = seconds > 0 ? Int(Double(bytesRead) / 1_000_000 / seconds) : 0
    return "reading \(read) MB of \(total) MB (\(percent) %), \(rate) MB/s"
  }

  private static func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}
