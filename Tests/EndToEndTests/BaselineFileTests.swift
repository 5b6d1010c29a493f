import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 29, item 8: a baseline file that cannot mean what it says is a one-line error
/// (status 2) naming it, never a silent pass; `--write-baseline` through a symbolic link
/// writes the file the link points to and keeps the link.
@Suite struct BaselineFileTests {
  static let log = "fixtures/gate/leaks.jsonl"

  /// The baseline `check` writes for the gate fixture, as JSON.
  private func recordedBaseline(in scratch: ScratchDirectory) throws -> [String: Any] {
    let path = scratch.file("recorded.json")
    let run = try CLIRun.run(["check", Self.log, "--write-baseline", path])
    try #require(run.status == 0 || run.status == 1, "\(run.standardError)")
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  private func write(_ object: [String: Any], to path: String) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted])
    try data.write(to: URL(fileURLWithPath: path))
  }

  /// Runs the gate against `baseline` and expects exactly one error line containing each of
  /// `parts`, and status 2.
  private func expectRefused(_ baseline: String, _ parts: [String]) throws {
    let run = try CLIRun.run(["check", Self.log, "--baseline", baseline], timeout: .seconds(60))
    #expect(run.status == 2, "\(run.standardError)")
    #expect(run.errorLines.count == 1, "\(run.standardError)")
    for part in parts {
      #expect(run.standardError.contains(part), "\(run.standardError)")
    }
    #expect(run.standardOutput == "")
  }

  @Test func aRepeatedIdIsAnError() throws {
    let scratch = try ScratchDirectory("baseline-repeat")
    defer { scratch.remove() }
    var baseline = try recordedBaseline(in: scratch)
    var findings = try #require(baseline["findings"] as? [[String: Any]])
    try #require(findings.count >= 2)
    findings.append(findings[0])
    baseline["findings"] = findings
    let path = scratch.file("repeated.json")
    try write(baseline, to: path)
    let id = try #require(findings[0]["id"] as? String)
    try expectRefused(path, [path, "findings[\(findings.count - 1)].id: \(id)", "findings[0]"])
  }

  @Test func anUnknownKindIsAnError() throws {
    let scratch = try ScratchDirectory("baseline-unknown-kind")
    defer { scratch.remove() }
    var baseline = try recordedBaseline(in: scratch)
    var findings = try #require(baseline["findings"] as? [[String: Any]])
    findings[0]["kind"] = "leakd"
    baseline["findings"] = findings
    let path = scratch.file("unknown-kind.json")
    try write(baseline, to: path)
    try expectRefused(path, [path, "findings[0].kind: expected one of"])
  }

  /// A known kind that is not the kind of the finding with that id: the entry was edited,
  /// and it used to let the finding pass.
  @Test func aKindThatIsNotItsFindingsIsAnError() throws {
    let scratch = try ScratchDirectory("baseline-wrong-kind")
    defer { scratch.remove() }
    var baseline = try recordedBaseline(in: scratch)
    var findings = try #require(baseline["findings"] as? [[String: Any]])
    let kind = try #require(findings[0]["kind"] as? String)
    findings[0]["kind"] = kind == "stuck" ? "leaked" : "stuck"
    baseline["findings"] = findings
    let path = scratch.file("wrong-kind.json")
    try write(baseline, to: path)
    let id = try #require(findings[0]["id"] as? String)
    try expectRefused(
      path, [path, "the entry with id \(id) has kind ", "the finding with that id is \(kind)"])
  }

  @Test func devNullIsNotAnEmptyBaseline() throws {
    try expectRefused("/dev/null", ["/dev/null", "a character device, not a regular file"])
  }

  @Test func aFIFOIsRefusedWithoutReadingIt() throws {
    let scratch = try ScratchDirectory("baseline-fifo")
    defer { scratch.remove() }
    let fifo = scratch.file("baseline.fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    try expectRefused(fifo, [fifo, "a FIFO, not a regular file"])
  }

  /// The link stays a link, the file it points to gets the baseline, and the gate reads it
  /// back through the link.
  @Test(arguments: [false, true])
  func writingThroughASymbolicLinkKeepsTheLink(dangling: Bool) throws {
    let scratch = try ScratchDirectory("baseline-link")
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.file("committed"), withIntermediateDirectories: true)
    let target = scratch.file("committed/baseline.json")
    if !dangling { try Data("{}".utf8).write(to: URL(fileURLWithPath: target)) }
    let link = scratch.file("baseline-link.json")
    // A relative link, taken from the link's directory.
    try #require(symlink("committed/baseline.json", link) == 0)

    let run = try CLIRun.run(["check", Self.log, "--write-baseline", link])
    #expect(run.status == 0, "\(run.standardError)")
    let attributes = try FileManager.default.attributesOfItem(atPath: link)
    #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
    let written = try String(contentsOfFile: target, encoding: .utf8)
    #expect(written.contains("\"baselineVersion\": 1"))

    let again = try CLIRun.run(["check", Self.log, "--baseline", link])
    #expect(again.status == 0, "\(again.standardError)")
  }
}
