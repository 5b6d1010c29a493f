import DeallocAnalysis
import DeallocLog

#if canImport(Glibc)
  import Glibc
#endif

/// Where a command's result goes: standard output, or the file named by `-o` (or `--junit`).
///
/// A file is written to a temporary sibling and renamed over the target only when every
/// byte is written, so a failed run (a full disk, a signal) never leaves a half-written
/// report, nor a truncated earlier one. The trade-off: the target's inode changes (a hard
/// link to it keeps the old report; a symbolic link is followed, and the file it names is
/// replaced), and the directory must be writable. A target that exists and is not a regular file (`/dev/null`,
/// `/dev/stdout`, a FIFO) is written in place: it cannot be half-written, and renaming over
/// a device node would replace it.
enum Output {
  /// Writes `text` to `path`, or to standard output when `path` is `nil` or `-`.
  static func write(_ text: String, to path: String?) throws(AnalysisError) {
    var text = text
    try write(to: path) { fd, name in text.withUTF8 { writeAll($0, to: fd, path: name) } }
  }

  /// Writes `report` as `renderer` renders it, as ``write(_:to:)`` writes text: from the
  /// bytes the renderer lends (``ReportRenderer/withBytes(of:_:)``), which need no `String`
  /// (and no UTF-8 check of tens of megabytes) on their way out.
  static func write(
    _ report: Report, as renderer: any ReportRenderer, to path: String?
  ) throws(AnalysisError) {
    try write(to: path) { fd, name in
      renderer.withBytes(of: report) { writeAll($0, to: fd, path: name) }
    }
  }

  /// Opens `path` as the type's documentation says and has `content` write everything to the
  /// descriptor (named for messages); `content` returns its failure, if any.
  private static func write(
    to path: String?, _ content: (Int32, String) -> AnalysisError?
  ) throws(AnalysisError) {
    guard let path, !isStandardOutput(path) else {
      if let failure = content(1, "<stdout>") { throw failure }
      return
    }
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
      let fd = open(path, O_WRONLY | O_CLOEXEC)
      guard fd >= 0 else { throw .outputUnwritable(path: path, reason: reason(errno)) }
      defer { close(fd) }
      if let failure = content(fd, path) { throw failure }
      return
    }
    // Through a symbolic link, the file it names is replaced, not the link.
    var target = path
    if let resolved = realpath(path, nil) {
      target = String(cString: resolved)
      free(resolved)
    }
    let slash = target.lastIndex(of: "/")
    let directory = slash.map { String(target[...$0]) } ?? ""
    var template = Array((directory + ".dealloctrace-output-XXXXXX").utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw .outputUnwritable(path: path, reason: reason(errno)) }
    let temporary = String(
      decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var done = false
    defer {
      if !done { unlink(temporary) }
    }
    // mkstemp makes the file 0600; a report is as readable as `open(…, 0644)` made it.
    let mask = umask(0)
    umask(mask)
    fchmod(fd, 0o644 & ~mask)
    if let failure = content(fd, path) {
      close(fd)
      throw failure
    }
    guard close(fd) == 0 else { throw .outputUnwritable(path: path, reason: reason(errno)) }
    guard rename(temporary, target) == 0 else {
      throw .outputUnwritable(path: path, reason: reason(errno))
    }
    done = true
  }

  /// Whether an output path names standard output: none given, or `-`.
  static func isStandardOutput(_ path: String?) -> Bool {
    path == nil || path == "-"
  }

  /// Whether `path` is standard output (``isStandardOutput(_:)``), on a terminal.
  static func isTerminal(_ path: String?) -> Bool {
    isStandardOutput(path) && isatty(1) == 1
  }

  /// Refuses an output that is one of the inputs: the same device and inode, however it is
  /// named (a relative path, a symbolic link, a hard link). Checked before anything is
  /// written, so a typo such as `-o run.jsonl` costs nothing.
  /// - Throws: ``AnalysisError/outputIsInput(output:input:)``.
  static func refuseInputs(outputs: [String?], inputs: [String]) throws(AnalysisError) {
    var identities: [(dev: UInt64, ino: UInt64, name: String)] = []
    for input in inputs {
      var info = stat()
      if stat(input, &info) == 0 {
        identities.append((UInt64(info.st_dev), UInt64(info.st_ino), input))
      }
    }
    for case let output? in outputs where !isStandardOutput(output) {
      var info = stat()
      guard stat(output, &info) == 0 else { continue }
      if let input = identities.first(where: {
        $0.dev == UInt64(info.st_dev) && $0.ino == UInt64(info.st_ino)
      }) {
        throw .outputIsInput(output: output, input: input.name)
      }
    }
  }

  /// Whether `a` and `b` name one file: the same device and inode when both exist, else
  /// the same path once their directories are resolved (`./x` and `x`, links in between).
  static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    if stat(a, &first) == 0, stat(b, &second) == 0 {
      return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
    return canonical(a) == canonical(b)
  }

  /// `path` with its directory resolved by `realpath` (the file itself may not exist yet).
  private static func canonical(_ path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[..<$0]) } ?? "."
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    guard let resolved = realpath(directory.isEmpty ? "/" : directory, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved) + "/" + name
  }

  /// Writes every byte, retrying short writes; returns the failure, if any.
  static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to fd: Int32, path: String)
    -> AnalysisError?
  {
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return .outputUnwritable(path: path, reason: reason(errno))
      }
      offset += written
    }
    return nil
  }

  private static func reason(_ code: Int32) -> String {
    String(cString: strerror(code))
  }
}
