import CTraceRuntime
import DeallocHooks
import Glibc

/// The log's file descriptor, claimed so that two processes never interleave records.
///
/// Why each rule: a regular file is appended to (sessions follow one another), created
/// 0600 and claimed with an exclusive `flock`; when another process holds it, this one
/// writes `fallbackPath` beside it and says so once. A forked child shares the parent's
/// lock, so the fork handler switches its tracing off instead, and a lock held by this
/// process's own closing session is waited for (`Tracer.start`), never answered with a
/// fallback. An existing file is appended to only when it is this user's log (owned by the
/// effective user, writable by no one else, empty or starting with `session`); anything
/// else is refused with one line, and nothing is ever chmodded.
///
/// The trade-off for devices and FIFOs: written as they are, unlocked and with no fallback
/// (a fallback beside a device would be a stray file, beside a FIFO one nobody reads), so
/// two processes sharing a FIFO interleave. A FIFO nobody reads fails at once (`ENXIO`).
struct LogFile: Sendable {
  let path: String
  let descriptor: Int32
  /// Set for a locked regular file: listed in `HeldFiles` until `close()`.
  private let identity: FileIdentity?

  /// How many bytes of an existing file are read to find its first record: the recorder's
  /// `session` record starts with `"ev":"session"`, so the first bytes decide.
  static let firstLineProbeBytes = 256

  static func claim(_ requested: String, pid: Int32) throws(DeallocTraceError) -> LogFile {
    let (descriptor, created) = try open(requested)
    guard ctrace_is_regular_file(descriptor) == 1 else {
      return LogFile(path: requested, descriptor: descriptor, identity: nil)
    }
    if !created {
      try refuseUnlessOwnLog(descriptor, path: requested)
    }
    let identity = FileIdentity(of: descriptor, pid: pid)
    if ctrace_try_lock(descriptor) != 0 {
      return held(requested, descriptor: descriptor, identity: identity)
    }
    if let identity, HeldFiles.contains(identity) {
      Glibc.close(descriptor)
      throw .heldByThisProcess(path: requested)
    }
    // Our own closing session may have let go between the lock and the look at the list
    // (it unlocks first, then leaves the list): one more try tells that from another process,
    // since no new session of ours can claim the file while `start` holds `control`.
    if ctrace_try_lock(descriptor) != 0 {
      return held(requested, descriptor: descriptor, identity: identity)
    }
    Glibc.close(descriptor)
    let alternative = fallbackPath(for: requested, pid: pid)
    let (fallback, createdFallback) = try open(alternative)
    if !createdFallback && ctrace_is_regular_file(fallback) == 1 {
      try refuseUnlessOwnLog(fallback, path: alternative)
    }
    _ = ctrace_try_lock(fallback)
    StandardError.write(
      "dealloctrace: \(escaped: requested) is in use by another process; pid \(pid) writes its"
        + " log to \(escaped: alternative)")
    return held(alternative, descriptor: fallback, identity: FileIdentity(of: fallback, pid: pid))
  }

  /// Where a process writes when another process holds `requested`: the pid goes before a
  /// `.jsonl` extension (`run.jsonl` → `run.4242.jsonl`), else `.<pid>.jsonl` is appended, so
  /// that a directory input (`dealloctrace check DIR` reads `*.jsonl`) finds it.
  static func fallbackPath(for requested: String, pid: Int32) -> String {
    let fileName = requested.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    if fileName.hasSuffix(".jsonl") && fileName.count > ".jsonl".count {
      return String(requested.dropLast(".jsonl".count)) + ".\(pid).jsonl"
    }
    return "\(requested).\(pid).jsonl"
  }

  /// Appends `bytes`, all or nothing from the caller's view. A file size limit or a pipe
  /// without a reader is an error (`EFBIG`, `EPIPE`), never a signal (`ctrace_write_log`).
  func write(_ bytes: [UInt8]) throws(DeallocTraceError) {
    let status = bytes.withUnsafeBytes { ctrace_write_log(descriptor, $0.baseAddress, $0.count) }
    if status != 0 {
      throw .writeFailed(path: path, errno: ctrace_errno())
    }
  }

  /// Throws when the file was unlinked: writes to it would succeed and be lost.
  func checkStillLinked() throws(DeallocTraceError) {
    var status = stat()
    if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 0 {
      throw .fileRemoved(path: path)
    }
  }

  /// Closes the file, then lets this process claim it again (the order matters: a claim
  /// racing this must see the file as this process's until the lock is really gone).
  func close() {
    Glibc.close(descriptor)
    if let identity { HeldFiles.remove(identity) }
  }

  /// The file's size now, for a regular file (what `DEALLOCTRACE_MAX_SIZE` counts from:
  /// earlier sessions included); 0 for a device or FIFO, which only count what is written.
  func currentSize() -> UInt64 {
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
    return UInt64(max(0, status.st_size))
  }

  private static func held(
    _ path: String, descriptor: Int32, identity: FileIdentity?
  ) -> LogFile {
    if let identity { HeldFiles.add(identity) }
    return LogFile(path: path, descriptor: descriptor, identity: identity)
  }

  /// Opens `path` for appending: created here (`O_EXCL`) when it did not exist, so that only a
  /// file the recorder made skips the ownership checks.
  private static func open(_ path: String) throws(DeallocTraceError) -> (Int32, created: Bool) {
    let created = ctrace_open_log(path, 1)
    if created >= 0 { return (created, true) }
    guard ctrace_errno() == EEXIST else { throw .cannotOpen(path: path, errno: ctrace_errno()) }
    let existing = ctrace_open_log(path, 0)
    guard existing >= 0 else { throw .cannotOpen(path: path, errno: ctrace_errno()) }
    return (existing, false)
  }

  /// Closes `descriptor` and throws unless the regular file it names is a log of this user.
  private static func refuseUnlessOwnLog(
    _ descriptor: Int32, path: String
  ) throws(DeallocTraceError) {
    var status = stat()
    let problem: String?
    if fstat(descriptor, &status) != 0 {
      problem = "cannot stat it"
    } else if status.st_uid != geteuid() {
      problem = "it belongs to another user (uid \(status.st_uid))"
    } else if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
      problem =
        "others can write it (mode 0\(String(status.st_mode & 0o7777, radix: 8)))"
    } else if status.st_size > 0 && !startsWithSessionRecord(path, status) {
      problem = "it is not a dealloctrace log (its first line is not a session record)"
    } else {
      problem = nil
    }
    guard let problem else { return }
    Glibc.close(descriptor)
    throw .notOwnLog(path: path, reason: problem)
  }

  /// Whether the file at `path` (the one `expected` describes, not one swapped in since)
  /// starts with a `session` record.
  private static func startsWithSessionRecord(_ path: String, _ expected: stat) -> Bool {
    let reader = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard reader >= 0 else { return false }
    defer { Glibc.close(reader) }
    var status = stat()
    guard fstat(reader, &status) == 0, status.st_dev == expected.st_dev,
      status.st_ino == expected.st_ino
    else { return false }
    var bytes = [UInt8](repeating: 0, count: firstLineProbeBytes)
    let count = bytes.withUnsafeMutableBytes { pread(reader, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return false }
    let firstLine = bytes[..<count].prefix { $0 != UInt8(ascii: "\n") }
    let text = String(decoding: firstLine, as: UTF8.self)
    return text.hasPrefix("{") && text.contains("\"ev\":\"session\"")
  }
}

/// A locked log file: its device and inode, and the process that locked it.
struct FileIdentity: Hashable, Sendable {
  let device: UInt64
  let inode: UInt64
  let pid: Int32

  init?(of descriptor: Int32, pid: Int32) {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    self.pid = pid
  }
}

/// The log files this process's sessions hold locked, until their writer closes them: a
/// lock that fails on one of these is this process's own, not another process's. The pid is
/// part of the identity, so a forked child (which inherits the list and the parent's open
/// file) still sees the parent's lock as another process's.
///
/// Counted, not a set: a closing session releases its lock before it leaves the list, so a
/// new session can claim the same file in between; with a set, the old session's removal
/// then dropped the new session's entry, and the next `start` blamed "another process".
enum HeldFiles {
  private static let all = AnnotatedMutex<[FileIdentity: Int]>([:])

  static func add(_ identity: FileIdentity) {
    all.withLock { $0[identity, default: 0] += 1 }
  }

  static func remove(_ identity: FileIdentity) {
    all.withLock { held in
      guard let count = held[identity] else { return }
      held[identity] = count > 1 ? count - 1 : nil
    }
  }

  static func contains(_ identity: FileIdentity) -> Bool {
    all.withLock { $0[identity] != nil }
  }
}

/// One line on stderr, written with a single `write` so lines of threads don't mix.
enum StandardError {
  static func write(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { ctrace_write_log(2, $0.baseAddress, $0.count) }
  }
}
