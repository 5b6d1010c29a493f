import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A fresh directory under the system's temporary directory, for one test; the test removes
/// it with `remove()` (a directory left behind after a failure helps to debug it).
public struct ScratchDirectory: Sendable {
  public let url: URL

  /// Made with `mkdtemp`, so that parallel tests and test processes never share one;
  /// `name` shows which test made it.
  public init(_ name: String = "tests") throws {
    let template = NSTemporaryDirectory() + "dealloctrace-\(name)-XXXXXX"
    var bytes = Array(template.utf8CString)
    guard let made = mkdtemp(&bytes) else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    url = URL(fileURLWithPath: String(cString: made), isDirectory: true)
  }

  public var path: String { url.path }

  /// The path of `name` inside the directory.
  public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  public func remove() {
    try? FileManager.default.removeItem(at: url)
  }
}
