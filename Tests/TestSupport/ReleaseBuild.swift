import Foundation
import Synchronization

/// A product of this package built with `-c release`, for the tests that run a child in both
/// builds. SwiftPM decides what is out of date: it is asked to build once per test process
/// (a no-op build when nothing changed), so no list of the sources a product depends on is
/// kept by hand, and a stale binary is never what gets tested.
///
/// The build has a scratch path of its own (`.build/release-children`): `swift test` holds
/// the lock of `.build` while tests run, so a nested build there would wait for it. The
/// products share that scratch path, so their common targets are built once.
public enum ReleaseBuild {
  /// The package's root, from this file's path (Tests/TestSupport/ReleaseBuild.swift).
  public static let packageRoot = PackageRoot.url

  static let scratch = packageRoot.appendingPathComponent(".build/release-children")

  /// Each product's outcome in this process, and the lock that makes concurrent callers of
  /// one product wait for its single build.
  private static let outcomes = Mutex<[String: Result<URL, ReleaseBuildFailure>]>([:])

  /// The release executable of `product`, built (or found up to date) on first use.
  public static func executable(_ product: String) throws -> URL {
    try outcomes.withLock { outcomes in
      if let known = outcomes[product] { return try known.get() }
      let outcome = build(product)
      outcomes[product] = outcome
      return try outcome.get()
    }.self
  }

  private static func build(_ product: String) -> Result<URL, ReleaseBuildFailure> {
    let arguments = [
      "swift", "build", "-c", "release", "--product", product, "--package-path",
      packageRoot.path, "--scratch-path", scratch.path,
    ]
    let run: ChildRun
    do {
      run = try ChildProcess(
        URL(fileURLWithPath: "/usr/bin/env"), arguments, standardError: .mergedIntoOutput
      ).run(timeout: .seconds(1800))
    } catch {
      return .failure(ReleaseBuildFailure(product: product, output: "\(error)"))
    }
    guard run.status == 0, !run.timedOut else {
      return .failure(ReleaseBuildFailure(product: product, output: run.standardOutput))
    }
    return .success(scratch.appendingPathComponent("release/\(product)"))
  }
}

/// A release build that failed or timed out, with what the build printed.
public struct ReleaseBuildFailure: Error, CustomStringConvertible {
  public var product: String
  public var output: String
  public var description: String {
    "swift build -c release --product \(product) failed:\n\(output)"
  }
}
