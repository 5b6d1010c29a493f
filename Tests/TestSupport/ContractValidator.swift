import Foundation
import XCTest

/// The log contract's validator (`shared/tools/validate-log`, beside the checkout, as in CI),
/// one way for every test target.
public enum ContractValidator {
  /// Runs the shared validator when it and python3 are there; nil when they are not. In
  /// CI (`CI=true`) their absence is a failure, not a skip: a contract check that silently
  /// stops running is worse than none.
  public static func verdict(
    for url: URL, file: StaticString = #filePath, line: UInt = #line
  ) -> (status: Int32, output: String)? {
    // The contract's validator sits in `shared/`, beside the checkout (as in CI).
    let validator = PackageRoot.url.deletingLastPathComponent()
      .appendingPathComponent("shared/tools/validate-log")
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let python, FileManager.default.fileExists(atPath: validator.path) else {
      if isCI {
        XCTFail(
          "CI=true but the contract validator cannot run: "
            + (python == nil ? "no python3" : "no \(validator.path)"), file: file, line: line)
      }
      return nil
    }
    let child = ChildProcess(
      URL(fileURLWithPath: python), [validator.path, url.path], standardError: .mergedIntoOutput)
    guard let run = try? child.start().wait() else {
      if isCI {
        XCTFail("CI=true but \(python) \(validator.path) did not start", file: file, line: line)
      }
      return nil
    }
    return (run.status, run.standardOutput)
  }
}

/// Whether the tests run in CI, where a check that cannot run must fail instead of skip.
var isCI: Bool {
  ProcessInfo.processInfo.environment["CI"] == "true"
}
