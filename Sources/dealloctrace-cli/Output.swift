import DeallocAnalysis

#if canImport(Glibc)
  import Glibc
#endif

/// Where a command's result goes: standard output, or the file named by `-o`.
enum Output {
  /// Writes `text` to `path`, or to standard output when `path` is `nil` or `-`.
  static func write(_ text: String, to path: String?) throws(AnalysisError) {
    var text = text
    guard let path, path != "-" else {
      if let failure = text.withUTF8({ writeAll($0, to: 1, path: "<stdout>") }) { throw failure }
      return
    }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw .outputUnwritable(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(fd) }
    if let failure = text.withUTF8({ writeAll($0, to: fd, path: path) }) { throw failure }
  }

  /// Writes `text` to standard error, for output meant for a reader of that stream (GitHub
  /// annotations when standard output carries a machine-readable verdict), failing like
  /// ``write(_:to:)`` rather than dropping it as diagnostics may.
  static func writeStandardError(_ text: String) throws(AnalysisError) {
    var text = text
    if let failure = text.withUTF8({ writeAll($0, to: 2, path: "<stderr>") }) { throw failure }
  }

  /// Writes every byte, retrying short writes; returns the failure, if any.
  private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to fd: Int32, path: String)
    -> AnalysisError?
  {
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return .outputUnwritable(path: path, reason: String(cString: strerror(errno)))
      }
      offset += written
    }
    return nil
  }
}
