import Foundation
import PackagePlugin

/// Where the build put the package's test product, `<Package>PackageTests.xctest` (an
/// executable on Linux). The build result lists executables and libraries but not always
/// the test product, so it is looked for beside them, then in the build directory the
/// plugin's work directory sits in (`<scratch>/plugins/<plugin>/outputs`).
enum TestProductLocation {
  struct NotFound: Error, CustomStringConvertible {
    var name: String
    var description: String {
      "dealloctrace: no test product \(name) was built (does the package have test targets?)"
    }
  }

  static func find(
    package: String, build: PackageManager.BuildResult, workDirectory: URL
  ) throws -> URL {
    let name = "\(package)PackageTests.xctest"
    var directories = build.builtArtifacts.map { $0.url.deletingLastPathComponent() }
    let scratch = workDirectory.deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    directories.append(scratch.appending(path: "debug"))
    for directory in directories {
      let candidate = directory.appending(path: name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw NotFound(name: name)
  }
}
