import DeallocAnalysis
import Testing

@Suite struct AnalyzerTests {
  @Test func everyStateFollowsTheContract() throws {
    // Session 1 ends cleanly: freed, late, leaked, never released.
    // Session 2 has no end: one pending, one stuck (threshold 1 s).
    let log = try TemporaryLog([
      Line.session(),
      Line.enqueue(1, t: 0), Line.enqueue(2, t: 0), Line.enqueue(3, t: 0), Line.enqueue(4, t: 0),
      Line.release(1, t: 100), Line.release(2, t: 100, freed: false),
      Line.release(3, t: 100, freed: false),
      Line.dealloc(2, t: 200), Line.end(t: 300, pending: 1),
      Line.session(),
      Line.enqueue(1, t: 0), Line.enqueue(2, t: 1_000_000_000),
      #"{"ev":"mark","t":2000000000,"label":"last","tid":1}"#,
    ])
    let report = try log.report()
    let s = report.summary
    #expect(
      [
        s.sessions, s.enqueued, s.released, s.freed, s.late, s.leaked, s.pending, s.stuck,
        s.neverReleased,
      ]
        == [2, 6, 3, 1, 1, 1, 1, 1, 1])
    #expect(s.freed + s.late + s.leaked + s.pending + s.stuck + s.neverReleased == s.enqueued)
    #expect(report.findings.map(\.kind) == [.leaked, .stuck, .neverReleased])
  }

  /// An enqueue of an id still in use is skipped with a warning, whether that id is the
  /// highest so far (queued) or an older one (queued, or a survivor of its release); a new id
  /// below the highest is not in use and counts.
  @Test func anIdInUseIsRejectedWhereverItSits() throws {
    let log = try TemporaryLog([
      Line.session(),
      Line.enqueue(5, t: 0), Line.enqueue(9, t: 1),
      Line.release(5, t: 2, freed: false),
      Line.enqueue(9, t: 3),  // the highest, still queued
      Line.enqueue(5, t: 4),  // below the highest, a survivor
      Line.enqueue(7, t: 5),  // below the highest, new
      Line.end(t: 10),
    ])
    let report = try log.report()
    let reused = report.warnings.map(\.message).filter { $0.hasPrefix("enqueue reuses id") }
    #expect(reused.count == 2, "\(reused)")
    #expect(reused.contains { $0.hasPrefix("enqueue reuses id 9,") })
    #expect(reused.contains { $0.hasPrefix("enqueue reuses id 5,") })
    #expect(report.summary.enqueued == 3)
  }

  @Test func theStuckThresholdIsInclusiveForPending() throws {
    let log = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 0), Line.enqueue(2, t: 1),
      #"{"ev":"mark","t":1000000001,"label":"last","tid":1}"#,
    ])
    // Object 1 is exactly 1 s + 1 ns old, object 2 exactly 1 s: stuck, pending.
    let report = try log.report()
    #expect(report.summary.stuck == 1)
    #expect(report.summary.pending == 1)
    #expect(report.findings.first?.examples.first?.id == 1)
    let lenient = try log.report(stuckAfter: 2_000_000_000)
    #expect(lenient.summary.pending == 2)
  }

  /// The check at 20 saw the object waiting, but the queue's release left it alive (held
  /// elsewhere): a real leak, not a delayed dealloc (issue 28 item 6), as is the check after
  /// the release. A queued object the release frees is a false leak (the next tests).
  @Test func aCheckWhileQueuedOfAnObjectItsReleaseLeftAliveIsATrueLeak() throws {
    let log = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 10, obj: "0xa0"),
      Line.check(t: 20, obj: "0xa0", id: 1),
      Line.release(1, t: 100, freed: false, rc: 2),
      Line.check(t: 150, obj: "0xa0", id: 1),
      Line.end(t: 300),
    ])
    let report = try log.report()
    #expect(report.checks.map(\.verdict) == [.trueLeak, .trueLeak])
    #expect(report.summary.falseLeaks == 0 && report.summary.trueLeaks == 2)
    #expect(report.checks[0].explanation.hasSuffix("a real leak, not a delayed dealloc."))
    #expect(report.checks[0].object?.releasedAt == 100)
    #expect(report.checks[0].object?.state == .leaked)
    #expect(report.checks[1].explanation.contains("had already released it"))
  }

  @Test func aCheckWithoutIdMatchesTheLatestEnqueueOfItsAddress() throws {
    let log = try TemporaryLog([
      Line.session(),
      Line.enqueue(1, t: 10, obj: "0xa0"), Line.release(1, t: 20),
      Line.enqueue(2, t: 30, obj: "0xa0"),
      Line.check(t: 40, obj: "0xa0"),
      Line.release(2, t: 50),
      Line.check(t: 60, obj: "0xa0"),
      Line.check(t: 70, obj: "0xb0"),
      Line.end(t: 100),
    ])
    let report = try log.report()
    #expect(report.checks.map(\.verdict) == [.falseLeak, .trueLeak, .trueLeak])
    #expect(report.checks[0].object?.id == 2)
    // The address's latest enqueue before the check was released (and freed) before it.
    #expect(report.checks[1].object?.id == 2)
    #expect(report.checks[1].explanation.contains("that release freed it"))
    #expect(report.checks[2].object == nil)
    #expect(report.checks[2].explanation.contains("it was never handed to one"))
  }

  /// The address index is built at the first check without an id: it must still find an
  /// object enqueued long before, after compactions dropped the records around it.
  @Test func aCheckWithoutIdFindsAnObjectEnqueuedBeforeCompactions() throws {
    var lines = [Line.session(), Line.enqueue(1, t: 1, obj: "0xa0", q: "stalled")]
    for id in 2..<20_002 {
      lines.append(Line.enqueue(id, t: Int64(id) * 10))
      lines.append(Line.release(id, t: Int64(id) * 10 + 5))
    }
    lines += [Line.check(t: 300_000, obj: "0xa0"), Line.end(t: 400_000)]
    let report = try TemporaryLog(lines).report()
    #expect(report.checks.map(\.verdict) == [.falseLeak])
    #expect(report.checks.first?.object?.id == 1)
  }

  @Test func aCheckBeforeItsObjectWasEnqueuedIsATrueLeak() throws {
    let log = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 50, obj: "0xa0"), Line.check(t: 40, obj: "0xa0", id: 1),
      Line.release(1, t: 60), Line.end(t: 100),
    ])
    #expect(try log.report().checks.map(\.verdict) == [.trueLeak])
  }

  @Test func checksOfGoneObjectsCountButAreNoVerdicts() throws {
    let log = try TemporaryLog([
      Line.session(), Line.check(t: 1, obj: "0xa0", alive: false), Line.end(t: 2),
    ])
    let report = try log.report()
    #expect(report.summary.checks == 1)
    #expect(report.checks.isEmpty)
  }

  @Test func findingsGroupBySignatureOutsideTheMachinery() throws {
    let machinery = [
      "DeallocTrace.QueueTracing.prepareEnqueue(AnyObject) -> ()",
      "closure #1 () -> () in DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()",
      "swift_release",
    ]
    let log = try TemporaryLog([
      Line.session(),
      Line.stack(1, symbols: machinery + ["App.Screen.close() -> ()", "App.main()"]),
      Line.stack(
        2, symbols: Array(machinery.prefix(1)) + ["App.Screen.close() -> ()", "App.main()"]),
      Line.stack(3, symbols: machinery + ["App.Cache.evict() -> ()", "App.main()"]),
      Line.enqueue(1, t: 0, stack: 1), Line.enqueue(2, t: 0, stack: 2),
      Line.enqueue(3, t: 0, stack: 3),
      Line.enqueue(4, t: 0, type: "T.Other", stack: 1),
      Line.end(t: 10, pending: 4),
    ])
    let findings = try log.report().findings
    #expect(findings.map(\.count) == [2, 1, 1])
    #expect(
      findings[0].signature.frames.map(\.symbol) == ["App.Screen.close() -> ()", "App.main()"])
    #expect(findings[0].signature.title == "T.Node from Screen.close()")
    #expect(findings.map(\.signature.type) == ["T.Node", "T.Node", "T.Other"])
  }

  @Test func inconsistentRecordsAreWarningsNotCrashes() throws {
    let log = try TemporaryLog([
      Line.session(), Line.release(9, t: 1), Line.dealloc(9, t: 2),
      Line.enqueue(1, t: 3), Line.enqueue(1, t: 4), Line.end(t: 5, pending: 1),
    ])
    let report = try log.report()
    #expect(
      report.warnings.map(\.kind) == [
        .inconsistentRecord, .inconsistentRecord, .inconsistentRecord,
      ])
    #expect(report.summary.enqueued == 1)
  }

  @Test func peakDepthAndLatencyAreMeasured() throws {
    let log = try TemporaryLog([
      Line.session(),
      #"{"ev":"enqueue","t":10,"id":1,"obj":"0x1","type":"T","q":"a","tid":1,"depth":1}"#,
      #"{"ev":"enqueue","t":20,"id":2,"obj":"0x2","type":"T","q":"a","tid":1,"depth":2}"#,
      #"{"ev":"enqueue","t":30,"id":3,"obj":"0x3","type":"T","q":"b","tid":1,"depth":5}"#,
      Line.release(1, t: 110), Line.release(2, t: 140), Line.release(3, t: 1030, freed: false),
      Line.dealloc(3, t: 2030), Line.end(t: 3000),
    ])
    let report = try log.report()
    #expect(report.peak == QueuePeak(queue: "b", session: 0, depth: 5, at: 30))
    let stats = try #require(report.latency.enqueueToRelease.stats)
    #expect([stats.min, stats.p50, stats.max] == [100, 120, 1000])
    #expect(report.latency.releaseToDealloc.stats?.p50 == 1000)
    let a = try #require(report.sessions[0].queues.first { $0.queue == "a" })
    #expect(a.points.map(\.depth) == [1, 2, 1, 0])
  }

  @Test func warningsAreCappedButCounted() throws {
    let log = try TemporaryLog(
      [Line.session()] + Array(repeating: "x", count: 250) + [Line.end(t: 1)])
    let report = try log.report()
    #expect(report.warnings.count == 200)
    #expect(report.omittedWarnings == 50)
  }

  // MARK: - Bad numbers

  @Test func timesPastTheLimitsAreMalformedLinesAndTheRestIsRead() throws {
    // Once trapped: the enqueue → release latency overflowed Int64.
    let log = try TemporaryLog([
      Line.session(),
      #"{"ev":"enqueue","t":-9223372036854775807,"id":1,"obj":"0x1","type":"A","q":"s"}"#,
      #"{"ev":"release","t":9223372036854775807,"id":1,"freed":true}"#,
      #"{"ev":"enqueue","t":9223372036854775807,"id":2,"obj":"0x2","type":"A","q":"s"}"#,
      #"{"ev":"enqueue","t":9223372036854775807,"id":3,"obj":"0x3","type":"A","q":"s"}"#,
      Line.enqueue(4, t: 10), Line.release(4, t: 20), Line.end(t: 30),
    ])
    let report = try log.report()
    #expect(report.warnings.filter { $0.kind == .malformedLine }.count == 4)
    #expect(report.warnings.allSatisfy { $0.message.contains("out of range") })
    #expect(report.summary.enqueued == 1)
    #expect(report.summary.freed == 1)
    #expect(report.latency.enqueueToRelease.stats?.max == 10)
  }

  // MARK: - Verdicts by t, not by line order

  /// The recorder reads `t` before it takes its buffer lock, so a check timed before a release
  /// can be written after it: still a false leak, by id and by address, when the release
  /// freed the object; a true leak when it left it alive (object 2).
  @Test func aReleaseWrittenBeforeAnEarlierCheckLeavesItAFalseLeak() throws {
    let log = try TemporaryLog([
      Line.session(),
      Line.enqueue(1, t: 10_000, obj: "0xa0"), Line.enqueue(2, t: 10_000, obj: "0xb0"),
      Line.release(1, t: 100_000), Line.release(2, t: 100_000, freed: false, rc: 1),
      Line.check(t: 50_000, obj: "0xa0", id: 1), Line.check(t: 60_000, obj: "0xa0"),
      Line.check(t: 70_000, obj: "0xb0", id: 2), Line.check(t: 150_000, obj: "0xa0"),
      Line.end(t: 300_000),
    ])
    let report = try log.report()
    #expect(report.checks.map(\.verdict) == [.falseLeak, .falseLeak, .trueLeak, .trueLeak])
    #expect(report.summary.falseLeaks == 2 && report.summary.trueLeaks == 2)
    #expect(report.checks[0].object?.releasedAt == 100_000)
    #expect(report.checks[0].object?.state == .freed)
    #expect(report.checks[1].object?.id == 1)
    #expect(report.checks[2].object?.state == .leaked)
    #expect(report.checks[0].explanation.contains("The queue released it at 100 µs"))
    #expect(report.types.first { $0.type == "T.Node" }?.falseLeaks == 2)
  }

  /// A release timed before a check but written after it: the check saw an object the queue
  /// no longer held, a true leak, though the object was still queued when the check was read.
  /// The check timed before the release saw it waiting, but the release left it alive: a
  /// true leak too (issue 28 item 6).
  @Test func aReleaseWrittenAfterALaterCheckMakesItATrueLeak() throws {
    for listed in [1000, 0] {
      let log = try TemporaryLog([
        Line.session(),
        Line.stack(1, symbols: ["App.Screen.close() -> ()"]),
        Line.enqueue(1, t: 10_000, obj: "0xa0", stack: 1),
        Line.check(t: 100_000, obj: "0xa0", id: 1), Line.check(t: 40_000, obj: "0xa0", id: 1),
        Line.release(1, t: 50_000, freed: false, rc: 2),
        Line.end(t: 300_000),
      ])
      var options = AnalysisOptions()
      options.maximumListedChecks = listed
      let report = try DeallocAnalysis.analyze([log.path], options: options)
      #expect(report.summary.trueLeaks == 2, "listed \(listed)")
      #expect(report.summary.falseLeaks == 0, "listed \(listed)")
      #expect(report.types.first { $0.type == "T.Node" }?.trueLeaks == 2)
      // The object then leaked: its checks are facts of its one leaked finding.
      #expect(report.summary.trueLeaksOfLeaked == 2)
      #expect(!report.findings.contains { $0.kind == .trueLeak })
      let finding = try #require(report.findings.first { $0.kind == .leaked })
      #expect(finding.count == 1)
      #expect(finding.checks == 2)
      #expect(finding.examples.first?.checkedAt == 100_000)
      #expect(finding.examples.first?.releasedAt == 50_000)
      #expect(finding.signature.frames.first?.symbol == "App.Screen.close() -> ()")
      #expect(finding.explanation.contains("2 leak checks (the first: 'L') also saw it alive"))
      if listed > 0 {
        #expect(report.checks.map(\.verdict) == [.trueLeak, .trueLeak])
        #expect(report.checks[0].object?.state == .leaked)
      } else {
        #expect(report.checks.isEmpty)
      }
    }
  }

  /// Same-nanosecond records: a check at its object's enqueue `t` was after the hand-over (a
  /// false leak); at its release `t`, after the release (a true leak). Whatever the line order.
  @Test func equalTimestampsCountTheEnqueueInAndTheReleaseOut() throws {
    let inOrder = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 10, obj: "0xa0"),
      Line.check(t: 10, obj: "0xa0", id: 1), Line.check(t: 50, obj: "0xa0", id: 1),
      Line.release(1, t: 50), Line.end(t: 100),
    ])
    #expect(try inOrder.report().checks.map(\.verdict) == [.falseLeak, .trueLeak])
    let swapped = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 10, obj: "0xa0"), Line.release(1, t: 50),
      Line.check(t: 50, obj: "0xa0", id: 1), Line.check(t: 10, obj: "0xa0", id: 1),
      Line.end(t: 100),
    ])
    #expect(try swapped.report().checks.map(\.verdict) == [.trueLeak, .falseLeak])
  }

  /// What a true leak's explanation claims about a check that matched no queued object.
  @Test func aCheckOfAnAddressNoQueueHoldsAnyMoreSaysNoMoreThanTheLogShows() throws {
    let log = try TemporaryLog([
      Line.session(),
      Line.enqueue(1, t: 10, obj: "0xa0"), Line.release(1, t: 20),
      // Three seconds later the release of object 1 is past the analyzer's look-back.
      Line.enqueue(2, t: 3_000_000_000, obj: "0xb0"), Line.release(2, t: 3_000_000_010),
      Line.check(t: 25, obj: "0xb0"),
      Line.check(t: 4_000_000_000, obj: "0xa0"),
      Line.check(t: 4_000_000_000, obj: "0xc0"),
      Line.end(t: 5_000_000_000),
    ])
    let checks = try log.report().checks
    #expect(checks.map(\.verdict) == [.trueLeak, .trueLeak, .trueLeak])
    // Before object 2's enqueue: matched with nothing, but the address was enqueued later.
    #expect(
      checks[0].explanation.hasSuffix(
        "It was not waiting in any queue at that moment: a real leak."))
    #expect(
      checks[1].explanation.hasSuffix(
        "It was not waiting in any queue at that moment: a real leak."))
    #expect(checks[2].explanation.contains("it was never handed to one"))
  }
}
