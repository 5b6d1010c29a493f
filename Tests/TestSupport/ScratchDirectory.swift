import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// A fresh directory under the system's temporary directory, for one test. Every one is
/// removed when the test process exits, so a run leaves nothing in the temporary directory
/// however its tests end; an XCTest test that asks through `XCTestCase.scratchDirectory(_:)`
/// has it removed as soon as it ends. `DEALLOCTRACE_TEST_KEEP_SCRATCH=1` keeps them all, to
/// look at what a failing test wrote.
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
    Self.madeInThisProcess.withLock { made in
      if made.urls.isEmpty && made.pid == 0 {
        made.pid = getpid()
        atexit { ScratchDirectory.removeAllAtExit() }
      }
      made.urls.append(url)
    }
  }

  public var path: String { url.path }

  /// The path of `name` inside the directory.
  public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  public func remove() {
    guard !Self.keep else { return }
    try? FileManager.default.removeItem(at: url)
  }

  private static var keep: Bool {
    ProcessInfo.processInfo.environment["DEALLOCTRACE_TEST_KEEP_SCRATCH"] == "1"
  }

  /// The directories made so far, and the process that made them: a forked child that exits
  /// through `exit` runs the handler too, and must not remove its parent's directories.
  private static let madeInThisProcess = Mutex<(pid: pid_t, urls: [URL])>((0, []))

  private static func removeAllAtExit() {
    let made = madeInThisProcess.withLock { $0 }
    guard made.pid == getpid() else { return }
    for url in made.urls { ScratchDirectory(existing: url).remove() }
  }

  private init(existing url: URL) { self.url = url }
}

extension XCTestCase {
  /// A scratch directory removed when this test ends (whatever its outcome).
  public func scratchDirectory(_ name: String = "tests") throws -> ScratchDirectory {
    let directory = try ScratchDirectory(name)
    addTeardownBlock { directory.remove() }
    return directory
  }
}
