import CUnwind
import Glibc

/// The log's file descriptor, claimed so that two processes never interleave records.
///
/// The file is opened for appending (a file holds sessions one after the other) with mode
/// 0600, `O_CLOEXEC | O_NOFOLLOW`, and claimed with an exclusive `flock`. When another
/// process already holds `path` (a second test process given the same path, an exec'd
/// child that inherited the variable), this one writes to `path.<pid>` instead and says so
/// once on stderr. A forked child shares the parent's open file and lock, so the lock
/// can't tell them apart; the fork handler switches tracing off in the child instead.
///
/// That rule is for regular files only. A character device (`/dev/null`, a terminal) or a
/// FIFO is written as it is, unlocked and with no fallback: there is no file whose records
/// could interleave, and `PATH.<pid>` beside a device would be a stray file (as root, a
/// real `/dev/full.<pid>`), beside a FIFO a file nobody reads. Two processes writing one
/// FIFO do interleave their writes; a reader of a shared FIFO gets what it asked for. A
/// FIFO that nobody has open for reading fails at once (`ENXIO`) rather than hang the host.
struct LogFile: Sendable {
  let path: String
  let descriptor: Int32

  static func claim(_ requested: String, pid: Int32) throws(DeallocTraceError) -> LogFile {
    let descriptor = cunwind_open_log(requested, 0)
    guard descriptor >= 0 else {
      throw .cannotOpen(path: requested, errno: cunwind_errno())
    }
    guard cunwind_is_regular_file(descriptor) == 1 else {
      return LogFile(path: requested, descriptor: descriptor)
    }
    let lock = cunwind_try_lock(descriptor)
    if lock != 0 {
      restrictPermissions(descriptor)
      return LogFile(path: requested, descriptor: descriptor)
    }
    Glibc.close(descriptor)
    let alternative = "\(requested).\(pid)"
    var fallback = cunwind_open_log(alternative, 1)
    if fallback < 0 && cunwind_errno() == EEXIST {
      fallback = cunwind_open_log(alternative, 0)
    }
    guard fallback >= 0 else {
      throw .cannotOpen(path: alternative, errno: cunwind_errno())
    }
    _ = cunwind_try_lock(fallback)
    restrictPermissions(fallback)
    StandardError.write(
      "dealloctrace: \(requested) is in use by another process; pid \(pid) writes its log to "
        + alternative)
    return LogFile(path: alternative, descriptor: fallback)
  }

  /// Appends `bytes`, all or nothing from the caller's view.
  func write(_ bytes: [UInt8]) throws(DeallocTraceError) {
    let status = bytes.withUnsafeBytes { cunwind_write_all(descriptor, $0.baseAddress, $0.count) }
    if status != 0 {
      throw .writeFailed(path: path, errno: cunwind_errno())
    }
  }

  /// Throws when the file was unlinked: writes to it would succeed and be lost.
  func checkStillLinked() throws(DeallocTraceError) {
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 0 {
      throw .fileRemoved(path: path)
    }
  }

  func close() {
    Glibc.close(descriptor)
  }

  /// An existing regular file keeps whatever mode it had; make it private like a new one.
  private static func restrictPermissions(_ descriptor: Int32) {
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
      status.st_uid == geteuid()
    {
      _ = fchmod(descriptor, 0o600)
    }
  }
}

/// One line on stderr, written with a single `write` so lines of threads don't mix.
enum StandardError {
  static func write(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { cunwind_write_all(2, $0.baseAddress, $0.count) }
  }
}
