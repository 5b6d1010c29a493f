import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 29, item 1: directories of logs big enough for the pipelined reader, whose inputs'
/// names land at every place in a batch, including its last slot. Each name used to be
/// appended to a full batch unchecked: `report` and `check` died with "double free or
/// corruption" (status 134) on such valid directories.
@Suite struct ManyInputsEndToEndTests {
  /// A small valid log: a session, then `pairs` enqueues each released and freed. Its type
  /// name is `padding` bytes long, so that a directory of such logs reaches the pipelining
  /// threshold.
  static func log(pid: Int, pairs: Int, firstID: Int, padding: Int) -> String {
    let type = "App.Node" + String(repeating: "x", count: max(0, padding - 8))
    var lines = [
      #"{"ev":"session","v":1,"t":0,"pid":\#(pid),"exe":"/app/Many","delay_ms":100,"frames":0}"#
    ]
    for index in 0..<pairs {
      let id = firstID + index
      let time = (index + 1) * 1000
      lines.append(
        #"{"ev":"enqueue","t":\#(time),"id":\#(id),"obj":"0x\#(String(0x1000 + id * 16, radix: 16))","type":"\#(type)","q":"shared","tid":1,"depth":1}"#
      )
      lines.append(#"{"ev":"release","t":\#(time + 500),"id":\#(id),"tid":2,"freed":true}"#)
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The JSON report's summary of `directory`, after checking that `report` and `check`
  /// (with every bound at 0) both succeed on it.
  private func summary(of directory: String) throws -> [String: Any] {
    let report = try CLIRun.run(["report", "--format", "json", directory], timeout: .seconds(300))
    #expect(report.status == 0, "report: \(report.standardError.prefix(2000))")
    let check = try CLIRun.run(
      ["check", directory, "--max-leaked", "0", "--max-stuck", "0", "--max-true-leaks", "0"],
      timeout: .seconds(300))
    #expect(check.status == 0, "check: \(check.standardError.prefix(2000))")
    let document = try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8))
    let object = try #require(document as? [String: Any])
    return try #require(object["summary"] as? [String: Any])
  }

  /// The total size of the files in `directory`.
  private func totalSize(of directory: String) throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: directory).reduce(0) { total, name in
      var info = stat()
      return total + (stat(directory + "/" + name, &info) == 0 ? Int(info.st_size) : 0)
    }
  }

  /// Writes `text` to a new file with one `write`: Foundation's atomic writes (a temporary
  /// file and a rename each) made 20,000 files take a minute.
  static func write(_ text: String, to path: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      == bytes.count
  }

  /// The first log makes exactly one item less than a batch (its name, its session's start
  /// and end, and 2,044 records), so that the second log's name takes the batch's last slot;
  /// the second is big enough to pipeline.
  @Test func aSecondInputsNameInTheBatchsLastSlot() throws {
    let scratch = try ScratchDirectory("batch-last-slot")
    defer { scratch.remove() }
    let first = Self.log(pid: 1, pairs: 1022, firstID: 1, padding: 12)
    try #require(Self.write(first, to: scratch.file("a.jsonl")))
    let second = Self.log(pid: 2, pairs: 20_000, firstID: 100_000, padding: 400)
    try #require(Self.write(second, to: scratch.file("b.jsonl")))
    #expect(try totalSize(of: scratch.path) >= PipelinedVisitor<Analyzer>.minimumBytes)

    let summary = try summary(of: scratch.path)
    #expect(summary["sessions"] as? Int == 2)
    #expect(summary["enqueued"] as? Int == 21_022)
    #expect(summary["freed"] as? Int == 21_022)
    #expect(summary["leaked"] as? Int == 0)
  }

  /// 20,000 small logs of five items each: as five and 2,048 share no factor, the names
  /// land in every slot of a batch, the last one included, about ten times.
  /// `MANY_LOGS_COUNT` makes fewer (at least 2,048, which still reach every slot), each
  /// bigger, for a sanitizer's slower build (scripts/asan).
  @Test func twentyThousandSmallLogs() throws {
    let scratch = try ScratchDirectory("many-logs")
    defer { scratch.remove() }
    let requested = ProcessInfo.processInfo.environment["MANY_LOGS_COUNT"].flatMap { Int($0) }
    let count = max(2048, requested ?? 20_000)
    // Enough bytes a log for the whole directory to reach the pipelining threshold.
    let padding = max(300, PipelinedVisitor<Analyzer>.minimumBytes / count)
    for index in 0..<count {
      let text = Self.log(pid: index + 1, pairs: 1, firstID: index + 1, padding: padding)
      let name = scratch.file("dealloctrace.\(String(index + 1).leftPadded(to: 6)).jsonl")
      try #require(Self.write(text, to: name), "cannot write \(name)")
    }
    #expect(try totalSize(of: scratch.path) >= PipelinedVisitor<Analyzer>.minimumBytes)

    let summary = try summary(of: scratch.path)
    #expect(summary["sessions"] as? Int == count)
    #expect(summary["enqueued"] as? Int == count)
    #expect(summary["freed"] as? Int == count)
  }
}

extension String {
  /// The string with zeros in front, up to `width` characters: names that sort as numbers.
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
