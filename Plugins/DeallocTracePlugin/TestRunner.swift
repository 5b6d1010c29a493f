import Foundation

/// Runs the built test product as `swift test` does: once for XCTest, once with
/// `--testing-library swift-testing`, each with the tracing environment.
struct TestRunner {
  var product: URL
  var filter: String?
  var environment: [String: String]

  /// XCTest on Linux takes a comma-separated list of `Module.Class/method` names, not a
  /// pattern, so the filter is matched here against the product's own list.
  func runXCTest() throws -> Bool {
    var arguments: [String] = []
    if let filter {
      let pattern = try Regex(filter)
      let (status, listing) = try ToolRun.output(product, ["--list-tests"])
      guard status == 0 else { return false }
      let selected = listing.split(separator: "\n").map(String.init).filter {
        $0.contains("/") && !$0.hasPrefix("Listing ") && $0.contains(pattern)
      }
      if selected.isEmpty { return true }
      arguments = [selected.joined(separator: ",")]
    }
    print("dealloctrace: running the XCTest tests")
    return try ToolRun.run(product, arguments, environment: environment) == 0
  }

  func runSwiftTesting() throws -> Bool {
    var arguments = ["--testing-library", "swift-testing"]
    if let filter { arguments += ["--filter", filter] }
    print("dealloctrace: running the Swift Testing tests")
    return try ToolRun.run(product, arguments, environment: environment) == 0
  }
}
