import Foundation
import TestSupport
import XCTest

@testable import DeallocLog

/// Retain/release history (issue 31 item 2): `TraceProbe history` with
/// `DEALLOCTRACE_HISTORY=TraceProbe.HistoryTarget`, in the debug and the release build. The
/// target's `holders` record carries its history, whose pairing shows the retain
/// `keepAnExtraReference` took as never given back and the one `retainAndReleaseInBalance`
/// took as given back; the bystander, of a type not named, has no history.
final class RetainHistoryRecordTests: XCTestCase {
  func testOutstandingRetainIsTheKeepersDebug() throws { try checkOutstanding(.debug) }
  func testOutstandingRetainIsTheKeepersRelease() throws { try checkOutstanding(.release) }
  func testHistoryForOneTypeLeavesTheOtherOutDebug() throws { try checkOtherTypeLeftOut(.debug) }
  func testHistoryForOneTypeLeavesTheOtherOutRelease() throws {
    try checkOtherTypeLeftOut(.release)
  }

  func testUnownedReferencesAreRecordedAndPairedApartDebug() throws {
    try checkUnowned(.debug)
  }
  func testUnownedReferencesAreRecordedAndPairedApartRelease() throws {
    try checkUnowned(.release)
  }

  func testTheCapKeepsTheOutstandingRetainDebug() throws { try checkCap(.debug) }
  func testTheCapKeepsTheOutstandingRetainRelease() throws { try checkCap(.release) }

  /// More balanced rounds than the recorder keeps events per object: paired events are
  /// dropped and counted, the outstanding retain is kept, and the finding says so.
  private func checkCap(_ build: ProbeBuild) throws {
    let records = try historyRun(build, patterns: "TraceProbe.HistoryTarget", variant: "cap")
    let report = try holders(of: "TraceProbe.HistoryTarget", in: records)
    let history = try XCTUnwrap(report.retainHistory, "no history")
    XCTAssertGreaterThan(history.droppedPaired, 0)
    let pairing = RetainPairing(history)
    let description = RetainHistoryText.timelineLines(history).joined(separator: "\n")
    let outstanding = pairing.outstanding.map { pairing.events[$0] }
    XCTAssertEqual(
      outstanding.filter {
        RetainHistoryText.programFrames($0.frames).prefix(3).contains {
          $0.displayName.contains("keepAnExtraReference")
        }
      }.count, 1, description)
    let lines = HolderPathText.lines(report, type: "TraceProbe.HistoryTarget", address: nil)
    XCTAssertTrue(
      lines.contains(
        "  (\(history.droppedPaired) paired events were dropped by the recorder's"
          + " cap per object; the unpaired ones were all kept)"), lines.joined(separator: "\n"))
  }

  /// `history unowned` (a -Onone build, where every unowned retain in the source is made):
  /// the unowned reference `holdUnowned` stored in a field and `letUnownedGo` dropped is an
  /// `unowned-retain` and an `unowned-release`, paired with each other and with no strong
  /// event; `loadUnownedStrong`'s strong load (swift_unownedRetainStrong) is a retain that
  /// its release gives back, so the outstanding retain stays the keeper's alone; the
  /// bystander, of a type not named, has no history.
  private func checkUnowned(_ build: ProbeBuild) throws {
    let records = try historyRun(build, patterns: "TraceProbe.HistoryTarget", variant: "unowned")
    let history = try XCTUnwrap(
      try holders(of: "TraceProbe.HistoryTarget", in: records).retainHistory, "no history")
    let pairing = RetainPairing(history)
    let description = RetainHistoryText.timelineLines(history).joined(separator: "\n")
    func within(_ function: String, _ event: RetainHistory.Event) -> Bool {
      event.frames.contains { $0.displayName.contains(function) }
    }
    let unownedRetains = pairing.events.indices.filter {
      pairing.events[$0].kind == .unownedRetain
    }
    let unownedReleases = pairing.events.indices.filter {
      pairing.events[$0].kind == .unownedRelease
    }
    XCTAssertTrue(
      unownedRetains.contains { within("holdUnowned", pairing.events[$0]) }, description)
    XCTAssertTrue(
      unownedReleases.contains { within("letUnownedGo", pairing.events[$0]) }, description)
    XCTAssertEqual(pairing.unownedOutstanding, [], description)
    for index in unownedReleases {
      let taken = try XCTUnwrap(pairing.gaveBack[index], description)
      XCTAssertEqual(pairing.events[taken].kind, .unownedRetain, description)
    }
    // An unowned event's count is the strong count, which it leaves as it was.
    for index in unownedRetains + unownedReleases {
      XCTAssertGreaterThan(pairing.events[index].countAfter ?? 0, 0, description)
    }
    // The strong load is a retain of its own, given back, never an outstanding one.
    let loads = pairing.events.indices.filter {
      pairing.events[$0].kind == .retain && within("loadUnownedStrong", pairing.events[$0])
    }
    XCTAssertFalse(loads.isEmpty, description)
    for index in loads { XCTAssertNotNil(pairing.givenBackBy[index], description) }
    // Seen, it is no reference inferred from the counts (as before the load was recorded).
    XCTAssertFalse(
      pairing.events.indices.dropLast().contains {
        pairing.events[$0].kind == .unseen && within("loadUnownedStrong", pairing.events[$0 + 1])
      }, description)
    let outstanding = pairing.outstanding.map { pairing.events[$0] }
    XCTAssertEqual(
      outstanding.filter { within("keepAnExtraReference", $0) }.count, 1, description)
    XCTAssertFalse(
      outstanding.contains { within("loadUnownedStrong", $0) || within("holdUnowned", $0) },
      description)
    XCTAssertTrue(description.contains(". unowned-retain (count "), description)
    XCTAssertNil(try holders(of: "TraceProbe.HistoryBystander", in: records).retainHistory)
  }

  /// An unknown type name is no error, and a glob names the target.
  func testUnknownNameIsNoErrorAndGlobsMatch() throws {
    let records = try historyRun(.debug, patterns: "Nowhere.Unknown, *.HistoryTar*")
    let sessions = records.compactMap { record -> SessionRecord? in
      guard case .session(let session) = record else { return nil }
      return session
    }
    let session = try XCTUnwrap(sessions.first)
    XCTAssertEqual(session.historyPatterns, "Nowhere.Unknown, *.HistoryTar*")
    XCTAssertNotNil(try holders(of: "TraceProbe.HistoryTarget", in: records).retainHistory)
  }

  private func checkOutstanding(_ build: ProbeBuild) throws {
    let records = try historyRun(build, patterns: "TraceProbe.HistoryTarget")
    let history = try XCTUnwrap(
      try holders(of: "TraceProbe.HistoryTarget", in: records).retainHistory, "no history")
    let pairing = RetainPairing(history)
    let outstanding = pairing.outstanding.map { pairing.events[$0] }
    func named(_ function: String, _ event: RetainHistory.Event) -> Bool {
      RetainHistoryText.programFrames(event.frames).prefix(3).contains {
        $0.displayName.contains(function)
      }
    }
    let description = RetainHistoryText.timelineLines(history).joined(separator: "\n")
    XCTAssertEqual(
      outstanding.filter { named("keepAnExtraReference", $0) }.count, 1, description)
    XCTAssertFalse(
      outstanding.contains { named("retainAndReleaseInBalance", $0) }, description)
    // The balanced function's retain was recorded, and paired.
    let balanced = pairing.events.indices.filter {
      pairing.events[$0].isRetain && named("retainAndReleaseInBalance", pairing.events[$0])
    }
    XCTAssertFalse(balanced.isEmpty, description)
    for index in balanced { XCTAssertNotNil(pairing.givenBackBy[index], description) }
    // Each event has a stack and the count after it.
    for event in history.events {
      XCTAssertFalse(event.frames.isEmpty, description)
      XCTAssertNotNil(event.countAfter, description)
    }
  }

  private func checkOtherTypeLeftOut(_ build: ProbeBuild) throws {
    let records = try historyRun(build, patterns: "TraceProbe.HistoryTarget")
    XCTAssertNotNil(try holders(of: "TraceProbe.HistoryTarget", in: records).retainHistory)
    XCTAssertNil(try holders(of: "TraceProbe.HistoryBystander", in: records).retainHistory)
  }

  /// The release-time `holders` report of the survivor of type `type`.
  private func holders(of type: String, in records: [LogRecord]) throws -> HolderReport {
    let found = records.compactMap { record -> HolderRecord? in
      guard case .holders(let holders) = record, holders.type == type,
        holders.reason == .release
      else { return nil }
      return holders
    }
    return try XCTUnwrap(found.first, "no holders record for \(type)").holders
  }

  private func historyRun(
    _ build: ProbeBuild, patterns: String, variant: String? = nil
  ) throws -> [LogRecord] {
    let directory = try ScratchDirectory("history")
    defer { directory.remove() }
    let url = directory.file("history-\(build).jsonl")
    let run = try ProbeRun.run(
      ["history"] + (variant.map { [$0] } ?? []),
      environment: [
        "DEALLOCTRACE_LOG": url, "DEALLOCTRACE_HOLDERS": "1",
        "DEALLOCTRACE_HISTORY": patterns,
      ],
      executable: try build.executable())
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    if let verdict = ContractValidator.verdict(for: URL(fileURLWithPath: url)) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
    var parser = RecordParser()
    var records: [LogRecord] = []
    let text = try String(contentsOfFile: url, encoding: .utf8)
    for line in text.split(separator: "\n") {
      var bytes = Array(line.utf8)
      records.append(
        try bytes.withUnsafeMutableBufferPointer { buffer in
          try parser.parse(UnsafeBufferPointer(buffer))
        })
    }
    return records
  }
}
