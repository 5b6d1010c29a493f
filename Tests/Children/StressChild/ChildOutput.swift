#if canImport(Glibc)
  import Glibc
#endif

/// Lines the parent test reads, each written with one `write(2)` so that they reach the
/// pipe at once (no stdio buffer a SIGKILL could swallow).
enum ChildOutput {
  static func line(_ text: String) {
    write(1, text + "\n")
  }

  static func error(_ text: String) {
    write(2, "StressChild: " + text + "\n")
  }

  private static func write(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeMutableBytes {
        Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
      }
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return }
      offset += written
    }
  }
}
