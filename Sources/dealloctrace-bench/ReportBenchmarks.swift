import DeallocAnalysis
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Figures for the log reader and analyser: throughput on a generated log of a million
/// objects next to `wc -l` on the same file (the floor: reading bytes and finding
/// newlines), and the peak memory of the analysis.
func reportFigures(into figures: inout BenchFigures) {
  let objects = 1_000_000
  let (path, bytes) = generatedLog(objects: objects)
  defer { removeGeneratedLog(path) }

  // The floor: wc -l on the same file, after the file is in the page cache (both read it
  // warm). CPU seconds, not wall time: the machine is shared, and the target is per core.
  _ = runWc(path)
  let wcSeconds = (0..<3).map { _ in runWc(path) }.min()!

  // Reading and parsing only (a visitor that keeps nothing).
  let readerSeconds = (0..<3).map { _ in
    cpuTime {
      var reader = LogReader()
      var sink = CountingVisitor()
      try? reader.read([LogInput(path: path)], into: &sink)
      precondition(sink.records > 0, "the reader delivered nothing")
    }
  }.min()!

  // The whole analysis, with its peak memory.
  resetPeakMemory()
  let baseline = currentResidentBytes()
  var summary = Summary()
  var analysisRuns: [Double] = []
  for _ in 0..<3 {
    analysisRuns.append(
      cpuTime {
        let report = try? DeallocAnalysis.analyze([path])
        summary = report?.summary ?? Summary()
      })
  }
  let analysisSeconds = analysisRuns.min()!
  let peak = peakResidentBytes()
  precondition(summary.enqueued == objects, "the analysis lost objects")

  let megabytes = Double(bytes) / 1_000_000
  figures.add("report_log_mb", megabytes)
  figures.add("report_log_objects", objects)
  figures.add("report_clock", "CPU seconds of the reading thread (wc: of the child), best of 3")
  figures.add("report_wc_l_seconds", wcSeconds)
  figures.add("report_wc_l_mb_per_s", megabytes / wcSeconds)
  figures.add("report_reader_only_mb_per_s", megabytes / readerSeconds)
  figures.add("report_seconds", analysisSeconds)
  figures.add("report_mb_per_s", megabytes / analysisSeconds)
  figures.add("report_time_vs_wc_l_ratio", analysisSeconds / wcSeconds)
  figures.add("report_target_mb_per_s", 300)
  figures.add("report_meets_target", megabytes / analysisSeconds >= 300)
  figures.add("report_peak_rss_mb", Double(peak) / 1_000_000)
  figures.add("report_rss_growth_mb", Double(max(0, peak - baseline)) / 1_000_000)
  figures.add("report_peak_rss_vs_log_size_ratio", Double(peak) / Double(bytes))
}

/// The streaming promise at the size the issue names: a generated log of 5,000,000
/// objects (about 1.07 GB) analysed once, with the analysis's peak memory next to the log's
/// size. The floor is the log itself: a reader that kept it would need at least that much.
func largeReportFigures(into figures: inout BenchFigures) {
  let objects = 5_000_000
  let (path, bytes) = generatedLog(objects: objects)
  defer { removeGeneratedLog(path) }
  resetPeakMemory()
  let baseline = currentResidentBytes()
  var summary = Summary()
  let seconds = cpuTime {
    summary = (try? DeallocAnalysis.analyze([path]))?.summary ?? Summary()
  }
  let peak = peakResidentBytes()
  precondition(summary.enqueued == objects, "the analysis lost objects")
  figures.add("report_large_log_mb", Double(bytes) / 1_000_000)
  figures.add("report_large_log_objects", objects)
  figures.add("report_large_mb_per_s", Double(bytes) / 1_000_000 / seconds)
  // The process's peak while analysing (what was resident before included), and how much of
  // it the analysis added.
  figures.add("report_large_peak_rss_mb", Double(peak) / 1_000_000)
  figures.add("report_large_rss_growth_mb", Double(max(0, peak - baseline)) / 1_000_000)
  figures.add("report_large_peak_rss_vs_log_size_ratio", Double(peak) / Double(bytes))
  figures.add("report_large_peak_rss_target_mb", 1024)
  figures.add("report_large_meets_target", peak < 1 << 30)
}

/// A visitor that only counts, so that its time is the reader's.
private struct CountingVisitor: LogVisitor {
  var records = 0
  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    records += 1
  }
  mutating func warn(_ warning: LogWarning) {}
}

/// A generated log of `objects` objects in a fresh temporary directory: its path and size.
private func generatedLog(objects: Int) -> (path: String, bytes: Int) {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("dealloctrace-bench-\(getpid())-\(objects)")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  let path = directory.appendingPathComponent("generated.jsonl").path
  return (path, generateLog(objects: objects, at: path))
}

/// Removes what `generatedLog` made.
private func removeGeneratedLog(_ path: String) {
  try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
}

/// Writes a log shaped like a traced program's: one session, a few threads and stacks,
/// `objects` enqueues released in batches of 64 by timed drains, a few survivors (some
/// deallocated later), checks and marks. Returns its size in bytes.
private func generateLog(objects: Int, at path: String) -> Int {
  guard let file = fopen(path, "w") else { fatalError("cannot create \(path)") }
  defer { fclose(file) }
  var buffer = ""
  buffer.reserveCapacity(1 << 20)
  var total = 0
  func emit(_ line: String) {
    buffer += line
    buffer += "\n"
    if buffer.utf8.count >= 1 << 20 { flush() }
  }
  func flush() {
    total += buffer.utf8.count
    _ = buffer.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) }
    buffer.removeAll(keepingCapacity: true)
  }
  emit(
    #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Feed","wall":"2026-11-29T18:03:07.123456Z","delay_ms":100,"frames":32}"#
  )
  emit(#"{"ev":"thread","tid":4242,"name":"main"}"#)
  emit(#"{"ev":"thread","tid":4250,"name":"dealloc.shared"}"#)
  let types = ["Feed.NodeCell", "Feed.DataController", "Feed.ImageNode", "Feed.TextNode"]
  for stack in 1...8 {
    emit(
      #"{"ev":"stack","id":\#(stack),"frames":[{"ip":"0x55d0c0a10010","mod":"/app/Feed","off":"0x10010","sym":"DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()"},{"ip":"0x55d0c0a1b2\#(stack)c3","mod":"/app/Feed","off":"0x1b2\#(stack)c3","sym":"Feed.FeedScreen.close\#(stack)() -> ()"},{"ip":"0x7f1234529d90","mod":"/usr/lib/x86_64-linux-gnu/libc.so.6","off":"0x29d90"}]}"#
    )
  }
  let batch = 64
  var t: Int64 = 1000
  var id = 1
  var survivors: [Int] = []
  while id <= objects {
    let first = id
    let last = min(objects, id + batch - 1)
    for object in first...last {
      t += 1_537
      let address = String(0x6000_00c0_0000 + UInt64(object % 50_000) * 64, radix: 16)
      emit(
        #"{"ev":"enqueue","t":\#(t),"id":\#(object),"obj":"0x\#(address)","type":"\#(types[object % types.count])","q":"shared","tid":4242,"depth":\#(object - first + 1),"stack":\#(object % 8 + 1),"rc":1}"#
      )
    }
    if first % 4096 == 1 {
      emit(#"{"ev":"mark","t":\#(t),"label":"batch \#(first)","tid":4242}"#)
      emit(
        #"{"ev":"check","t":\#(t + 1),"obj":"0x\#(String(0x6000_00c0_0000 + UInt64(first % 50_000) * 64, radix: 16))","type":"\#(types[first % types.count])","alive":true,"label":"FeedTests.testBatch","id":\#(first)}"#
      )
    }
    t += 100_000_000 / 64
    emit(
      #"{"ev":"drain","t":\#(t),"q":"shared","n":\#(last - first + 1),"tid":4250,"why":"timer"}"#)
    for object in first...last {
      t += 211
      if object % 10_000 == 0 {
        emit(#"{"ev":"release","t":\#(t),"id":\#(object),"tid":4250,"freed":false,"rc":2}"#)
        survivors.append(object)
      } else {
        emit(#"{"ev":"release","t":\#(t),"id":\#(object),"tid":4250,"freed":true}"#)
      }
    }
    if survivors.count > 1, let late = survivors.first {
      survivors.removeFirst()
      emit(#"{"ev":"dealloc","t":\#(t + 5),"id":\#(late)}"#)
    }
    id = last + 1
  }
  emit(#"{"ev":"end","t":\#(t + 1000),"why":"exit","pending":0,"lost":0}"#)
  flush()
  return total
}

/// CPU time of `body` on the calling thread, in seconds.
private func cpuTime(_ body: () -> Void) -> Double {
  func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
  let start = now()
  body()
  return now() - start
}

/// CPU time (user + system) of `wc -l PATH` (run directly, no shell), in seconds.
private func runWc(_ path: String) -> Double {
  func children() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
  let before = children()
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/wc")
  process.arguments = ["-l", path]
  process.standardOutput = FileHandle.nullDevice
  try? process.run()
  process.waitUntilExit()
  return max(children() - before, 1e-6)
}

/// Resets the kernel's peak-RSS mark (`VmHWM`) so that the next peak is the analysis's.
private func resetPeakMemory() {
  if let file = fopen("/proc/self/clear_refs", "w") {
    fputs("5", file)
    fclose(file)
  }
}

private func statusField(_ name: String) -> Int {
  guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
    return 0
  }
  for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
    let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
    return (Int(digits) ?? 0) * 1024
  }
  return 0
}

private func peakResidentBytes() -> Int { statusField("VmHWM") }
private func currentResidentBytes() -> Int { statusField("VmRSS") }
