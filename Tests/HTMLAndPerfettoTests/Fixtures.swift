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
}
