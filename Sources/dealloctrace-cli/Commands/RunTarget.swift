import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Whether `run` can preload the recorder into a command, judged from its file before it
/// runs: the loader ignores `LD_PRELOAD` in a setuid or setgid program, and a static binary
/// has no loader at all. Scripts and other dynamic programs are recordable; whether a
/// process is a Swift program is the preload's own check, in each process.
enum RunTarget: Equatable {
  case recordable
  case notFound
  /// One phrase naming the reason.
  case refused(String)

  static func check(_ program: String) -> RunTarget {
    guard let path = resolve(program) else { return .notFound }
    var status = stat()
    guard stat(path, &status) == 0 else { return .notFound }
    if status.st_mode & (S_ISUID | S_ISGID) != 0 {
      return .refused("\(program) is setuid or setgid, and the loader ignores LD_PRELOAD in it")
    }
    if isStaticELF(path) {
      return .refused("\(program) is a static binary, which loads no library")
    }
    return .recordable
  }

  /// The file `program` names: a path when it has a `/`, else the first executable file
  /// of that name on `PATH`.
  static func resolve(_ program: String) -> String? {
    if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
      var status = stat()
      if stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
        access(candidate, X_OK) == 0
      {
        return candidate
      }
    }
    return nil
  }

  /// Whether `path` is a 64-bit little-endian ELF executable without a `PT_INTERP` program
  /// header (no dynamic loader); false for anything it cannot read as one.
  static func isStaticELF(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    guard let header = try? handle.read(upToCount: 64), header.count == 64,
      header.starts(with: [0x7f, 0x45, 0x4c, 0x46]), header[4] == 2, header[5] == 1
    else { return false }
    let programHeaders = header.littleEndian(UInt64.self, at: 32)
    let entrySize = Int(header.littleEndian(UInt16.self, at: 54))
    let count = Int(header.littleEndian(UInt16.self, at: 56))
    guard entrySize >= 4, count > 0, count < 4096,
      (try? handle.seek(toOffset: programHeaders)) != nil,
      let table = try? handle.read(upToCount: entrySize * count), table.count == entrySize * count
    else { return false }
    let interpreter: UInt32 = 3
    return !(0..<count).contains {
      table.littleEndian(UInt32.self, at: $0 * entrySize) == interpreter
    }
  }
}

extension Data {
  /// The little-endian integer at byte `offset` (which the caller has checked is inside).
  fileprivate func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    var value: T = 0
    for index in (0..<MemoryLayout<T>.size).reversed() {
      value = value << 8 | T(self[startIndex + offset + index])
    }
    return value
  }
}
