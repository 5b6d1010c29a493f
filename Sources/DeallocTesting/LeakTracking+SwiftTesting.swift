import Testing

/// A Swift Testing trait that watches objects during each test and fails the test if any
/// is still alive at its end.
///
/// Inside a test (or every test of a suite) marked `.leakTracking`, `expectDeallocated(_:)`
/// and `LeakTracker.current` watch objects. At the end of each test case the tracker is
/// verified, whether it returned or threw: queued objects are drained from their
/// `DeallocQueue` and looked at again, so delayed deallocs pass without sleeping; survivors
/// and plain leaks record an issue at the line that watched them.
///
/// `.leakTracking(.allObjects)` also fails a test that leaves any object it made
/// unreachable, named or not (see `LeakTrackingTrait.Coverage.allObjects`).
public struct LeakTrackingTrait: TestTrait, SuiteTrait, TestScoping {
  /// How long to wait for objects released on other threads that no queue holds.
  public var settleTimeout: Duration

  /// Which objects each test is checked for.
  public var coverage: Coverage = .watchedObjects

  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test,
    testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    let tracker = LeakTracker(label: scopeLabel(test), settleTimeout: settleTimeout)
    let census = coverage == .allObjects ? AllObjectsCensus.begin(test, testCase) : nil
    // Verified on every exit: a test that throws after leaking still reports its leaks,
    // next to its error, which then propagates. The settle wait suspends.
    do {
      try await LeakTracker.$current.withValue(tracker) {
        try await function()
      }
    } catch {
      recordIssues(await tracker.verifySuspending())
      census?.end()
      throw error
    }
    recordIssues(await tracker.verifySuspending())
    census?.end()
  }
}

extension Trait where Self == LeakTrackingTrait {
  /// Fails each test that leaves a watched object alive; see `LeakTrackingTrait`.
  public static var leakTracking: Self { LeakTrackingTrait(settleTimeout: .milliseconds(500)) }

  /// `.leakTracking` with its own wait for objects released on other threads.
  public static func leakTracking(settleTimeout: Duration) -> Self {
    LeakTrackingTrait(settleTimeout: settleTimeout)
  }

  /// `.leakTracking` checking `coverage`: `.allObjects` fails each test that leaves any
  /// object it made unreachable (`DEALLOCTRACE_LEAKS=1`); see `LeakTrackingTrait.Coverage`.
  public static func leakTracking(
    _ coverage: LeakTrackingTrait.Coverage, settleTimeout: Duration = .milliseconds(500)
  ) -> Self {
    LeakTrackingTrait(settleTimeout: settleTimeout, coverage: coverage)
  }
}

/// Watches `object` until the end of the enclosing leak tracking scope (the
/// `.leakTracking` trait or `withLeakTracking`), which fails if it is still alive then.
///
/// Outside such a scope there is nobody to check at the end, so this records an issue
/// instead of silently watching nothing.
public func expectDeallocated(
  _ object: AnyObject,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  guard let tracker = LeakTracker.current else {
    Issue.record(
      Comment(
        rawValue: "expectDeallocated needs a leak tracking scope: mark the test "
          + ".leakTracking or wrap the code in withLeakTracking { }"),
      sourceLocation: sourceLocation
    )
    return
  }
  tracker.track(object, at: CallSite(sourceLocation))
}

/// Runs `body` with a fresh `LeakTracker` and records an issue for every object it
/// watched that is still alive when `body` returns or throws; for code where a trait does not fit
/// (a helper shared by tests, one part of a longer test).
///
/// The tracker is also `LeakTracker.current` inside `body`, so `expectDeallocated(_:)`
/// works there. Queued objects are drained, not waited for.
public func withLeakTracking<Result>(
  label: String? = nil,
  settleTimeout: Duration = .milliseconds(500),
  sourceLocation: SourceLocation = #_sourceLocation,
  _ body: (LeakTracker) throws -> Result
) rethrows -> Result {
  let tracker = LeakTracker(
    label: label ?? Test.current.map(scopeLabel) ?? "withLeakTracking at \(sourceLocation)",
    settleTimeout: settleTimeout
  )
  // Verified on every exit, a throwing `body` included; its error then propagates.
  defer { recordIssues(tracker.verify()) }
  return try LeakTracker.$current.withValue(tracker) {
    try body(tracker)
  }
}

/// The `async` form of `withLeakTracking(label:settleTimeout:sourceLocation:_:)`.
public func withLeakTracking<Result>(
  label: String? = nil,
  settleTimeout: Duration = .milliseconds(500),
  sourceLocation: SourceLocation = #_sourceLocation,
  isolation: isolated (any Actor)? = #isolation,
  _ body: (LeakTracker) async throws -> Result
) async rethrows -> Result {
  let tracker = LeakTracker(
    label: label ?? Test.current.map(scopeLabel) ?? "withLeakTracking at \(sourceLocation)",
    settleTimeout: settleTimeout
  )
  // Verified on every exit, a throwing `body` included; its error then propagates. The
  // settle wait suspends.
  let result: Result
  do {
    result = try await LeakTracker.$current.withValue(tracker) {
      try await body(tracker)
    }
  } catch {
    recordIssues(await tracker.verifySuspending())
    throw error
  }
  recordIssues(await tracker.verifySuspending())
  return result
}

extension LeakTracker {
  /// Starts watching `object`, with Swift Testing's `SourceLocation` for failures.
  public func track(_ object: AnyObject, sourceLocation: SourceLocation) {
    track(object, at: CallSite(sourceLocation))
  }
}

extension CallSite {
  /// The call site of a Swift Testing `SourceLocation`.
  public init(_ location: SourceLocation) {
    self.init(
      fileID: location.fileID,
      filePath: location.filePath,
      line: location.line,
      column: location.column
    )
  }
}

/// `Module.Suite.test()`: the label `check` records and failure messages carry.
func scopeLabel(_ test: Test) -> String {
  ([test.id.moduleName] + test.id.nameComponents).joined(separator: ".")
}

private func recordIssues(_ findings: [LeakFinding]) {
  var firstLocation: SourceLocation?
  for finding in findings {
    let site = finding.callSite
    let fileID = site.fileID.contains("/") ? site.fileID : "?/\(site.fileID)"
    let location = SourceLocation(
      fileID: fileID, filePath: site.filePath, line: site.line, column: site.column)
    Issue.record(
      LeakIssueTitle(description: finding.title),
      Comment(rawValue: "leak: \(finding)"),
      sourceLocation: location
    )
    recordLeakAttachment("leak: \(finding)\n", type: finding.typeName, at: location)
    if firstLocation == nil { firstLocation = location }
  }
  if let firstLocation { SessionReportAttachment.record(at: firstLocation) }
}

/// Attaches a failure's whole text (the holder path or the census tree) to the test, as
/// `leak-<Type>.txt`: kept where the runner keeps attachments (`--attachments-path`), beside
/// the JUnit and the CI log that show only the issue.
func recordLeakAttachment(_ text: String, type: String, at location: SourceLocation) {
  let name = type.split(separator: ".").last.map(String.init) ?? type
  let safe = String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" })
  Attachment.record(text, named: "leak-\(safe).txt", sourceLocation: location)
}
