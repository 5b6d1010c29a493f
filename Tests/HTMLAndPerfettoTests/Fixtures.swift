import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// The repository's fixtures, found from this file's path (tests run from any directory).
enum Fixtures {
  static let root = PackageRoot.appending("fixtures")

  static func path(_ relative: String) -> String {
    root.appendingPathComponent(relative).path
  }

  /// The report of one fixture, analysed with default options.
  static func report(_ relative: String) throws -> Report {
    try DeallocAnalysis.analyze([path(relative)])
  }

  /// A fresh temporary directory; the caller removes it (``XCTestCase/temporaryDirectory()``
  /// does so at the end of the test).
  static func temporaryDirectory() throws -> URL {
    try ScratchDirectory("visual").url
  }
}

extension XCTestCase {
  /// A fresh temporary directory, removed when the test ends.
  func temporaryDirectory() throws -> URL {
    let url = try Fixtures.temporaryDirectory()
    addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
  }
}
