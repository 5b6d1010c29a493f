import Foundation

/// The package's root folder, found from this file's path (Tests/TestSupport/PackageRoot.swift),
/// so that tests find fixtures, scripts and the README from whatever directory they run in.
public enum PackageRoot {
  public static let url = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// `relative` (a path inside the package) as a URL.
  public static func appending(_ relative: String) -> URL {
    url.appendingPathComponent(relative)
  }
}
