import Foundation
import TestSupport
import XCTest

/// The probe's scenario, traced through the environment, checked against the v1 contract.
final class TraceLogTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  private func tracedScenario() throws -> (ChildRun, ParsedLog, URL) {
    let log = directory.appendingPathComponent("scenario.jsonl")
    let run = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    return (run, try ParsedLog(contentsOf: log), log)
  }

  func testEveryRecordKindIsPresentAndTheSharedValidatorAccepts() throws {
    let (_, log, url) = try tracedScenario()
    let kinds = Set(log.records.compactMap { $0["ev"] as? String })
    XCTAssertEqual(
      kinds,
      [
        "session", "thread", "stack", "enqueue", "drain", "release", "dealloc", "mark", "check",
        "end",
      ])
    XCTAssertFalse(log.truncatedTail)
    XCTAssertEqual(log.records.first?["ev"] as? String, "session")
    XCTAssertEqual(log.records.last?["ev"] as? String, "end")
    if let verdict = ContractValidator.verdict(for: url) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
      XCTAssertTrue(verdict.output.contains("0 problems"), verdict.output)
    }
  }

  func testRecordsCarryTheContractsFields() throws {
    let (_, log, _) = try tracedScenario()
    let session = try XCTUnwrap(log.kind("session").first)
    XCTAssertEqual(session["v"] as? Int, 1)
    XCTAssertEqual(session["t"] as? Int, 0)
    XCTAssertEqual(session["frames"] as? Int, 32)
    XCTAssertEqual(session["delay_ms"] as? Int, 100)
    XCTAssertTrue((session["exe"] as? String)?.hasSuffix("/TraceProbe") ?? false)
    let wall = try XCTUnwrap(session["wall"] as? String)
    XCTAssertNotNil(
      wall.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"#, options: .regularExpression))
    let hex = #"^0x[0-9a-f]+$"#
    for record in log.records where record["ev"] as? String != "session" {
      let kind = record["ev"] as? String ?? ""
      if kind != "stack" && kind != "thread" {
        XCTAssertNotNil(record["t"] as? Int, "\(record)")
      }
      if let address = record["obj"] {
        let text = try XCTUnwrap(address as? String)
        XCTAssertNotNil(text.range(of: hex, options: .regularExpression), text)
      }
    }
    for enqueue in log.kind("enqueue") {
      for field in ["id", "obj", "type", "q", "tid", "depth", "stack", "rc"] {
        XCTAssertNotNil(enqueue[field], "enqueue lacks \(field): \(enqueue)")
      }
    }
    let queues = Set(log.kind("enqueue").compactMap { $0["q"] as? String })
    XCTAssertEqual(queues, ["shared", "probe"])
    let reasons = Set(log.kind("drain").compactMap { $0["why"] as? String })
    XCTAssertEqual(reasons, ["timer", "explicit"])
    let names = Set(log.kind("thread").compactMap { $0["name"] as? String })
    XCTAssertTrue(names.isSuperset(of: ["main", "probe-worker"]), "\(names)")
    let marks = log.kind("mark").compactMap { $0["label"] as? String }
    XCTAssertEqual(marks, ["screen closed", "deinit enqueued", "survivor let go"])
    let check = try XCTUnwrap(log.kind("check").first)
    XCTAssertEqual(check["type"] as? String, "TraceProbe.FeedController")
    XCTAssertEqual(check["alive"] as? Bool, true)
    XCTAssertEqual(check["label"] as? String, "TraceProbe.check")
  }

  func testThreadsAreAnnouncedBeforeTheirRecordsAndStacksBeforeUse() throws {
    let (_, log, _) = try tracedScenario()
    var threads = Set<Int>()
    var stacks = Set<Int>()
    for record in log.records {
      switch record["ev"] as? String {
      case "thread": threads.insert(record["tid"] as? Int ?? -1)
      case "stack": stacks.insert(record["id"] as? Int ?? -1)
      default: break
      }
      if let tid = record["tid"] as? Int, record["ev"] as? String != "thread" {
        XCTAssertTrue(threads.contains(tid), "tid \(tid) used before its thread record")
      }
      if record["ev"] as? String == "enqueue", let stack = record["stack"] as? Int {
        XCTAssertTrue(stacks.contains(stack), "stack \(stack) used before it was written")
      }
    }
    // Interning: every stack record is distinct.
    let frameLists = log.kind("stack").map { "\($0["frames"] ?? "")" }
    XCTAssertEqual(Set(frameLists).count, frameLists.count)
  }

  func testIdsPairUpAndEveryObjectIsAccountedFor() throws {
    let (_, log, _) = try tracedScenario()
    var enqueued: [Int: Int] = [:]
    var released: [Int: Int] = [:]
    for (index, record) in log.records.enumerated() {
      guard let id = record["id"] as? Int else { continue }
      switch record["ev"] as? String {
      case "enqueue":
        XCTAssertNil(enqueued[id], "id \(id) enqueued twice")
        enqueued[id] = index
      case "release":
        XCTAssertNil(released[id], "id \(id) released twice")
        let enqueuedAt = try XCTUnwrap(enqueued[id], "release of unknown id \(id)")
        XCTAssertLessThan(enqueuedAt, index)
        released[id] = index
      default: break
      }
    }
    XCTAssertEqual(enqueued.count, 5)
    XCTAssertEqual(Set(enqueued.keys), Set(released.keys))
    let end = try XCTUnwrap(log.kind("end").first)
    XCTAssertEqual(end["why"] as? String, "exit")
    XCTAssertEqual(end["pending"] as? Int, 0)
    XCTAssertEqual(end["lost"] as? Int, 0)
  }

  func testFreedIsFalseExactlyForTheRetainedObjectThenItsDeallocFollows() throws {
    let (_, log, _) = try tracedScenario()
    let types = Dictionary(
      uniqueKeysWithValues: log.kind("enqueue").map {
        ($0["id"] as? Int ?? -1, $0["type"] as? String ?? "")
      })
    let survivors = log.kind("release").filter { $0["freed"] as? Bool == false }
    XCTAssertEqual(survivors.count, 1, "\(log.kind("release"))")
    let survivor = try XCTUnwrap(survivors.first)
    let id = try XCTUnwrap(survivor["id"] as? Int)
    XCTAssertEqual(types[id], "TraceProbe.RetainedController")
    XCTAssertEqual(survivor["rc"] as? Int, 1, "only the global still holds it")
    let enqueue = try XCTUnwrap(log.kind("enqueue").first { $0["id"] as? Int == id })
    XCTAssertEqual(enqueue["rc"] as? Int, 2, "the global and the caller's variable")
    for release in log.kind("release") where release["id"] as? Int != id {
      XCTAssertEqual(release["freed"] as? Bool, true, "\(release)")
      XCTAssertNil(release["rc"])
    }
    let indexOfRelease = try XCTUnwrap(
      log.records.firstIndex { $0["ev"] as? String == "release" && $0["id"] as? Int == id })
    let deallocs = log.records.enumerated().filter {
      $0.element["ev"] as? String == "dealloc" && $0.element["id"] as? Int == id
    }
    XCTAssertEqual(deallocs.count, 1)
    XCTAssertGreaterThan(deallocs.first?.offset ?? -1, indexOfRelease)
    // It was let go after the "survivor let go" mark's moment, not before.
    let letGo = try XCTUnwrap(
      log.kind("mark").first { $0["label"] as? String == "survivor let go" })
    XCTAssertGreaterThanOrEqual(deallocs[0].element["t"] as? Int ?? 0, letGo["t"] as? Int ?? .max)
    XCTAssertEqual(log.kind("dealloc").count, 1)
  }

  func testASurvivorThatDiesUnobservedIsCaughtByTheTimer() throws {
    let log = directory.appendingPathComponent("timer.jsonl")
    let run = try ProbeRun.run(["timer-survivor"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let parsed = try ParsedLog(contentsOf: log)
    let release = try XCTUnwrap(parsed.kind("release").first)
    XCTAssertEqual(release["freed"] as? Bool, false)
    let dealloc = try XCTUnwrap(parsed.kind("dealloc").first)
    XCTAssertEqual(dealloc["id"] as? Int, release["id"] as? Int)
    let mark = try XCTUnwrap(parsed.kind("mark").first)
    let end = try XCTUnwrap(parsed.kind("end").first)
    let seen = try XCTUnwrap(dealloc["t"] as? Int)
    XCTAssertGreaterThan(seen, try XCTUnwrap(mark["t"] as? Int))
    XCTAssertLessThan(seen, try XCTUnwrap(end["t"] as? Int))
    // Nothing but the timer ran after the mark: the dealloc came from it (the order shows it;
    // how long after the mark depends on the machine's load, so it is not asserted).
    let kindsAfterMark = parsed.records.drop { $0["ev"] as? String != "mark" }.dropFirst()
      .compactMap { $0["ev"] as? String }
    XCTAssertEqual(kindsAfterMark.filter { $0 != "thread" }, ["dealloc", "end"])
  }

  func testEnqueueStackNamesTheEnqueuingFunctionDemangled() throws {
    let (_, log, _) = try tracedScenario()
    let first = try XCTUnwrap(log.kind("enqueue").first)
    XCTAssertEqual(first["type"] as? String, "TraceProbe.FeedController")
    let stackID = try XCTUnwrap(first["stack"] as? Int)
    let stack = try XCTUnwrap(log.kind("stack").first { $0["id"] as? Int == stackID })
    let frames = try XCTUnwrap(stack["frames"] as? [[String: Any]])
    let symbols = frames.compactMap { $0["sym"] as? String }
    let named = symbols.filter {
      $0 == "TraceProbe.handOverFeedController(levels: Swift.Int) -> ()"
    }
    XCTAssertEqual(named.count, 6, "five recursion levels plus the call: \(symbols)")
    let tracerNames = ["QueueTracing", "QueueRecorder", "DeallocHooks", "cunwind", "ctrace"]
    XCTAssertFalse(
      symbols.contains { symbol in tracerNames.contains { symbol.contains($0) } },
      "tracer frames: \(symbols)")
    let own = try XCTUnwrap(frames.first { ($0["sym"] as? String)?.contains("handOver") ?? false })
    XCTAssertTrue((own["mod"] as? String)?.hasSuffix("/TraceProbe") ?? false)
    let ip = try XCTUnwrap(UInt((own["ip"] as? String ?? "").dropFirst(2), radix: 16))
    let offset = try XCTUnwrap(UInt((own["off"] as? String ?? "").dropFirst(2), radix: 16))
    XCTAssertLessThan(offset, ip)
    XCTAssertLessThanOrEqual(frames.count, 32)
  }

  func testExplicitStartFinishAndASecondSessionInTheSameFile() throws {
    let log = directory.appendingPathComponent("explicit.jsonl")
    let run = try ProbeRun.run(["explicit", log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    let parsed = try ParsedLog(contentsOf: log)
    let sessions = parsed.kind("session")
    XCTAssertEqual(sessions.count, 2)
    XCTAssertEqual(sessions.last?["frames"] as? Int, 4)
    let ends = parsed.kind("end")
    XCTAssertEqual(ends.map { $0["why"] as? String }, ["explicit", "explicit"])
    XCTAssertEqual(ends.map { $0["lost"] as? Int }, [0, 0])
    XCTAssertEqual(ends.map { $0["pending"] as? Int }, [0, 0])
    XCTAssertEqual(parsed.kind("mark").last?["label"] as? String, "second session")
    let mode = try FileManager.default.attributesOfItem(atPath: log.path)[.posixPermissions]
    XCTAssertEqual(mode as? Int, 0o600)
    if let verdict = ContractValidator.verdict(for: log) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
  }
}
