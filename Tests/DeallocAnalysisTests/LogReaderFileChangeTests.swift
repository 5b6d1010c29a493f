import DeallocAnalysis
import DeallocLog
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A log that changes while it is read (a recorder still appending, a user truncating it):
/// the reader gives a report or a clear error, never a crash. The reader reads regular files
/// with `read(2)` into one reused buffer, not `mmap`, so that a truncation is an early end of
/// file, never a `SIGBUS`.
///
/// Two kinds of test: the change made at a known point (from the progress callback, which
/// runs between two chunks), and a real concurrent writer or truncator on another thread,
/// started once the reader has read its first chunk and stopped once the reader is done (no
/// sleeps: flags, so that the two overlap on any machine).
@Suite struct LogReaderFileChangeTests {
  /// A log of `objects` enqueue and release pairs: several read chunks long.
  private func bigLog(objects: Int) throws -> TemporaryLog {
    var lines = [Line.session()]
    for id in 1...objects {
      lines.append(Line.enqueue(id, t: Int64(id) * 10))
      lines.append(Line.release(id, t: Int64(id) * 10 + 5))
    }
    return try TemporaryLog(lines)
  }

  private func size(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : -1
  }

  @Test func aFileTruncatedBetweenTwoChunksEndsEarlyWithAWarning() throws {
    let log = try bigLog(objects: 30_000)
    #expect(size(log.path) > 3 << 20)
    var reader = LogReader()
    var truncated = false
    reader.progress = { _ in
      guard !truncated else { return }
      truncated = true
      #expect(truncate(log.path, 1000) == 0)
    }
    var analyzer = Analyzer()
    try reader.read([LogInput(path: log.path)], into: &analyzer)
    let report = analyzer.finish(inputs: [log.path])
    #expect(truncated)
    // What the first chunk held was read; the rest is gone, and the line cut by the first
    // chunk's end is the input's last line now.
    #expect(report.summary.enqueued > 1000)
    #expect(report.summary.enqueued < 30_000)
    #expect(report.warnings.contains { $0.kind == .truncatedLine })
  }

  @Test func aFileAppendedToBetweenTwoChunksIsReadToItsNewEnd() throws {
    let log = try bigLog(objects: 30_000)
    var reader = LogReader()
    var appended = false
    reader.progress = { _ in
      guard !appended else { return }
      appended = true
      let handle = FileHandle(forWritingAtPath: log.path)!
      handle.seekToEndOfFile()
      handle.write(Data((Line.enqueue(40_000, t: 900_000) + "\n").utf8))
      handle.closeFile()
    }
    var analyzer = Analyzer()
    try reader.read([LogInput(path: log.path)], into: &analyzer)
    let report = analyzer.finish(inputs: [log.path])
    #expect(report.summary.enqueued == 30_001)
    #expect(report.warnings.isEmpty)
  }

  @Test func aConcurrentWriterLeavesAReport() throws {
    let log = try bigLog(objects: 30_000)
    // Signalled by the reader's progress (its first read is under way) or by the test's end.
    let started = DispatchSemaphore(value: 0)
    let done = Flag()
    let writer = Thread {
      // Asleep, not spinning, until the reader has begun (bounded: a reader that never
      // reports progress leaves the thread to give up).
      guard started.wait(timeout: .now() + .seconds(60)) == .success, !done.isSet else { return }
      let fd = open(log.path, O_WRONLY | O_APPEND)
      defer { close(fd) }
      // Bounded: a writer faster than the reader would otherwise keep it from ever reaching
      // the end of the file.
      var id = 100_000
      while !done.isSet && id < 120_000 {
        let line = Line.enqueue(id, t: Int64(id) * 10) + "\n"
        _ = line.withCString { write(fd, $0, strlen($0)) }
        id += 1
      }
    }
    writer.start()
    var reader = LogReader()
    reader.progress = { _ in started.signal() }
    var analyzer = Analyzer()
    defer {
      done.set()
      started.signal()
    }
    try reader.read([LogInput(path: log.path)], into: &analyzer)
    done.set()
    let report = analyzer.finish(inputs: [log.path])
    #expect(report.summary.enqueued >= 30_000)
    // A line the writer had half written when the reader reached the end is a cut-short
    // last line: a warning, not a failure.
    #expect(report.warnings.allSatisfy { $0.kind == .truncatedLine })
  }

  @Test func aConcurrentTruncatorLeavesAReportOrAClearError() throws {
    let log = try bigLog(objects: 30_000)
    let original = try Data(contentsOf: log.url)
    // Signalled by the reader's progress (its first read is under way) or by the test's end.
    let started = DispatchSemaphore(value: 0)
    let done = Flag()
    let truncator = Thread {
      // Asleep, not spinning, until the reader has begun (bounded: a reader that never
      // reports progress leaves the thread to give up).
      guard started.wait(timeout: .now() + .seconds(60)) == .success, !done.isSet else { return }
      // Cuts the file and writes it back, over and over: the reader sees it shorter, longer,
      // or with a hole of zero bytes where it was cut.
      var length = original.count
      while !done.isSet {
        length = length > 4096 ? length / 2 : original.count
        _ = truncate(log.path, off_t(length))
        if let handle = FileHandle(forWritingAtPath: log.path) {
          handle.seek(toFileOffset: UInt64(length))
          handle.write(original.suffix(from: length))
          handle.closeFile()
        }
      }
    }
    truncator.start()
    var reader = LogReader()
    reader.progress = { _ in started.signal() }
    var analyzer = Analyzer()
    defer {
      done.set()
      started.signal()
    }
    do {
      try reader.read([LogInput(path: log.path)], into: &analyzer)
      done.set()
      let report = analyzer.finish(inputs: [log.path])
      #expect(report.sessions.count <= 1)
    } catch {
      done.set()
      // The only errors a changing file can cause: it looked empty, or its session line was
      // gone when it was read.
      #expect([.inputEmpty(path: log.path), .noSession(path: log.path)].contains(error))
    }
  }
}

/// A flag one thread sets and another polls.
private final class Flag: Sendable {
  private let value = Atomic<Bool>(false)
  var isSet: Bool { value.load(ordering: .acquiring) }
  func set() { value.store(true, ordering: .releasing) }
}
