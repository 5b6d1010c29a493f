import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The `holders` record, `session`'s `holders` flag and `end`'s scan counters, as the
/// reader decodes them; malformed ones are one clear failure, never a crash; caps hold.
@Suite struct HolderParserTests {
  private func parse(_ text: String) throws -> LogRecord {
    var parser = RecordParser()
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBufferPointer { buffer in
      try parser.parse(UnsafeBufferPointer(buffer))
    }
  }

  private func failure(_ text: String) -> String? {
    do {
      _ = try parse(text)
      return nil
    } catch let error as JSONScanner.Failure {
      return error.message
    } catch {
      return "\(error)"
    }
  }

  private func holders(_ paths: String, extra: String = "") -> String {
    #"{"ev":"holders","t":5,"id":3,"obj":"0x7f00","type":"Shop.Thumb","why":"release","direct":1,"more":0,"paths":"#
      + paths + #","scan_us":812\#(extra)}"#
  }

  @Test func theSpecExampleIsDecoded() throws {
    let record = try parse(
      holders(
        #"[{"root":{"kind":"global","sym":"Shop.ImageCache.shared","mod":"/abs/Shop"},"steps":[{"type":"Shop.ImageCache","obj":"0x7f10","off":24,"field":"keep"},{"type":"_ContiguousArrayStorage<AnyObject>","obj":"0x7f20","off":48,"element":2,"count":3}]},{"root":{"kind":"cycle"},"steps":[{"type":"closure context","obj":"0x7f30","off":16,"captures":["Shop.CartModel","Swift.String"]},{"type":"T","obj":"0x7f40","off":8}]},{"root":{"kind":"stack","tid":1234},"steps":[]},{"root":{"kind":"global","mod":"/m","off":"0x2f10"},"steps":[]}]"#
      ))
    let expected = HolderRecord(
      time: 5, id: 3, object: Address(0x7f00), type: "Shop.Thumb", reason: .release,
      holders: HolderReport(
        direct: 1, more: 0,
        paths: [
          HolderPath(
            root: HolderRoot(kind: .global, symbol: "Shop.ImageCache.shared", module: "/abs/Shop"),
            steps: [
              HolderStep(
                type: "Shop.ImageCache", address: Address(0x7f10), offset: 24,
                edge: .field("keep")),
              HolderStep(
                type: "_ContiguousArrayStorage<AnyObject>", address: Address(0x7f20), offset: 48,
                edge: .element(index: 2, count: 3)),
            ]),
          HolderPath(
            root: HolderRoot(kind: .cycle),
            steps: [
              HolderStep(
                type: "closure context", address: Address(0x7f30), offset: 16,
                edge: .captures(["Shop.CartModel", "Swift.String"])),
              HolderStep(type: "T", address: Address(0x7f40), offset: 8, edge: .unnamed),
            ]),
          HolderPath(root: HolderRoot(kind: .stack, tid: 1234), steps: []),
          HolderPath(root: HolderRoot(kind: .global, module: "/m", offset: 0x2f10), steps: []),
        ], scanMicroseconds: 812))
    #expect(record == .holders(expected))
  }

  @Test func sessionFlagAndEndCountersAreDecoded() throws {
    #expect(
      try parse(#"{"ev":"session","v":1,"t":0,"holders":true}"#)
        == .session(SessionRecord(version: 1, holders: true)))
    #expect(try parse(#"{"ev":"session","v":1,"t":0}"#) == .session(SessionRecord(version: 1)))
    #expect(
      try parse(
        #"{"ev":"end","t":9,"why":"exit","pending":0,"lost":0,"holder_scans":7,"holder_scans_skipped":2}"#
      )
        == .end(
          EndRecord(
            time: 9, reason: "exit", pending: 0, lost: 0, holderScans: 7, holderScansSkipped: 2)))
    // Without holders, no counters.
    #expect(
      try parse(#"{"ev":"end","t":9,"why":"exit","pending":0,"lost":0}"#)
        == .end(EndRecord(time: 9, reason: "exit", pending: 0, lost: 0)))
  }

  @Test func holderFieldsOnOtherKindsAreUnknownFields() throws {
    // A future field named like a holder field, of any shape, on another kind is skipped.
    #expect(
      try parse(
        #"{"ev":"dealloc","t":1,"id":2,"direct":"x","paths":7,"holders":[1],"holder_scans":-1}"#)
        == .dealloc(DeallocRecord(time: 1, id: 2)))
  }

  @Test(arguments: [
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"release","direct":1}"#,
      "holders record without 'paths'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"release","paths":[]}"#,
      "holders record without 'direct'"
    ),
    (
      #"{"ev":"holders","t":1,"type":"T","why":"release","direct":0,"paths":[]}"#,
      "holders record without 'obj'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","direct":0,"paths":[]}"#,
      "holders record without 'why'"
    ),
    (
      #"{"ev":"holders","obj":"0x1","type":"T","why":"end","direct":0,"paths":[]}"#,
      "holders record without 't'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":-1,"paths":[]}"#,
      "'direct' is out of range (0 to 2^48)"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":0,"more":1.5,"paths":[]}"#,
      "expected an integer, found a fraction"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":{}}"#,
      "expected '[' for 'paths' at byte 1"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"steps":[]}]}"#,
      "holder path without 'root'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"stack"}}]}"#,
      "holder path without 'steps'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"tid":1},"steps":[]}]}"#,
      "holder root without 'kind'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"cycle"},"steps":[{"obj":"0x1"}]}]}"#,
      "holder step without 'type'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"A","field":"f","element":1}]}]}"#,
      "holder step with more than one of 'field', 'element' and 'captures'"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"A","off":-8}]}]}"#,
      "'off' is out of range (0 to 2^48)"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"A","captures":"T"}]}]}"#,
      "expected '[' for 'captures' at byte 1"
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"global","off":"12"},"steps":[]}]}"#,
      "expected a hex string like \"0x1f\""
    ),
    (
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"A"}"#,
      "unexpected end of line"
    ),
    (#"{"ev":"session","v":1,"t":0,"holders":"yes"}"#, "expected true or false at byte 1"),
    (
      #"{"ev":"end","t":1,"why":"exit","pending":0,"lost":0,"holder_scans":-3}"#,
      "'holder_scans' is out of range (0 to 2^48)"
    ),
  ])
  func malformedHolderFieldsAreOneClearFailure(_ line: String, _ message: String) {
    let got = failure(line)
    #expect(got != nil, "\(line)")
    #expect(
      got?.contains(message.replacingOccurrences(of: " at byte 1", with: "")) == true,
      "\(got ?? "nil")")
  }

  @Test func pathsStepsAndCapturesAreCapped() throws {
    let step = #"{"type":"A","obj":"0x10","off":8,"field":"next"}"#
    let last = #"{"type":"Last","obj":"0x20","off":8,"field":"target"}"#
    let manySteps = Array(repeating: step, count: 40) + [last]
    let longPath = #"{"root":{"kind":"none"},"steps":["# + manySteps.joined(separator: ",") + "]}"
    let captures = (0..<20).map { "\"T\($0)\"" }.joined(separator: ",")
    let context =
      #"{"root":{"kind":"cycle"},"steps":[{"type":"closure context","captures":["# + captures
      + "]}]}"
    let paths =
      [longPath, context] + Array(repeating: #"{"root":{"kind":"heap"},"steps":[]}"#, count: 20)
    let record = try parse(holders("[" + paths.joined(separator: ",") + "]", extra: #","x":1"#))
    guard case .holders(let r) = record else {
      Issue.record("not a holders record")
      return
    }
    #expect(r.holders.paths.count == HolderLimits.maximumPaths)
    #expect(r.holders.more == 22 - HolderLimits.maximumPaths)
    let first = r.holders.paths[0]
    #expect(first.steps.count == HolderLimits.maximumSteps)
    #expect(first.omittedSteps == 41 - HolderLimits.maximumSteps)
    // The last step, which points at the object, is kept.
    #expect(first.steps.last?.type == "Last")
    guard case .captures(let types) = r.holders.paths[1].steps[0].edge else {
      Issue.record("not a closure context")
      return
    }
    #expect(types.count == HolderLimits.maximumCaptures + 1)
    #expect(types.last == "… 4 more")
  }

  @Test func inProcessValueParsesWithTheSameRules() throws {
    let value = try HolderReport.parse(
      json:
        #" {"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"A","obj":"0x1","off":16,"field":"f"}]}],"scan_us":3} "#
    )
    #expect(value?.paths.first?.groupingKey == "cycle → A.f")
    #expect(value?.surplus == 0)
    let counted = try HolderReport.parse(
      json: #"{"direct":0,"more":0,"paths":[],"surplus":2,"scan_us":3}"#)
    #expect(counted?.surplus == 2)
    #expect(throws: HolderReport.ParseError.self) {
      try HolderReport.parse(json: #"{"direct":0,"paths":[],"surplus":-1}"#)
    }
    #expect(try HolderReport.parse(json: "null") == nil)
    #expect(throws: HolderReport.ParseError.self) { try HolderReport.parse(json: #"{"direct":1}"#) }
    #expect(throws: HolderReport.ParseError.self) { try HolderReport.parse(json: "null x") }
    #expect(throws: HolderReport.ParseError.self) { try HolderReport.parse(json: "") }
  }

  @Test func malformedHoldersRecordIsAWarningWithFileAndLine() throws {
    let log = try TemporaryLog([
      #"{"ev":"session","v":1,"t":0,"holders":true}"#,
      #"{"ev":"holders","t":1,"obj":"0x1","type":"T","why":"end","direct":1,"paths":[{"root":{}}]}"#,
      #"{"ev":"end","t":2,"why":"exit","pending":0,"lost":0}"#,
    ])
    let report = try log.report()
    let messages = report.warnings.map(\.description)
    #expect(
      messages.contains {
        $0.hasSuffix("test.jsonl:2: malformed line skipped: holder root without 'kind'")
      },
      "\(messages)")
    #expect(report.holders.recorded)
  }
}
