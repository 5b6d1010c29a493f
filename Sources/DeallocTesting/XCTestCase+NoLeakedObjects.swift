import XCTest

extension XCTestCase {
  /// A census now, to compare with at the test's end (`assertNoLeakedObjects(since:)`).
  public func markLeakCensus() -> LeakCensusMark {
    LeakCensus.mark(LeakCensus.take(label: "\(name) start"))
  }

  /// Fails when the process now holds leaked objects (ROOT CYCLE or ROOT LEAK groups of the
  /// program's types; the libraries' own leaks never count) that the census at `mark` did
  /// not: the failure prints each new group's tree as `leaks` does. The queues are drained
  /// first, so a delayed dealloc is never a leak.
  ///
  /// The trade-off: the census sees the whole process, so a leak another test made while
  /// this one ran (parallel XCTest processes are separate, but threads this test did not
  /// start are not) counts here too; `mark` taken at the test's start keeps earlier leaks out.
  public func assertNoLeakedObjects(
    since mark: LeakCensusMark? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    guard let census = LeakCensus.take(label: "\(name) end") else {
      XCTFail("the leak census could not run: out of memory", file: file, line: line)
      return
    }
    if let error = census.error {
      XCTFail("the leak census could not run: \(error)", file: file, line: line)
      return
    }
    var groups = LeakCensus.newGroups(census, since: mark)
    guard !groups.isEmpty else { return }
    // A leak stays unreachable: what a second census no longer has was only in flight.
    if let again = LeakCensus.takeWithoutDraining(label: "\(name) end, again"), again.error == nil {
      groups = LeakCensus.confirmed(groups, by: again, since: mark)
      guard !groups.isEmpty else { return }
    }
    XCTFail(LeakCensus.failureLines(groups).joined(separator: "\n"), file: file, line: line)
  }
}
