import DeallocAnalysis
import DeallocLog
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Figures for the log reader and analyser: throughput on a generated log of a million
/// objects next to `wc -l` on the same file (the floor: reading bytes and finding
/// newlines), and the peak memory of the analysis.
func reportFigures(into figures: inout BenchFigures) {
  let objects = 1_000_000
  let (path, bytes) = generatedLog(.clean, objects: objects)
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

  // The whole analysis.
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
  // Its peak memory: a report in a process of its own.
  guard let child = reportInChild(path, objects: objects) else {
    figures.add("report_peak_rss_error", "the report child did not run")
    return
  }
  figures.add("report_peak_rss_mb", Double(child.peakBytes) / 1_000_000)
  figures.add("report_rss_growth_mb", Double(child.growthBytes) / 1_000_000)
  figures.add("report_peak_rss_vs_log_size_ratio", Double(child.peakBytes) / Double(bytes))
}

/// The streaming promise at the size the issue names: a generated log of 5,000,000
/// objects (about 1.07 GB) reported once, in a process of its own, with its peak memory next
/// to the log's size. The floor is the log itself: a reader that kept it would need at
/// least that much.
func largeReportFigures(into figures: inout BenchFigures) {
  let objects = 5_000_000
  let (path, bytes) = generatedLog(.clean, objects: objects)
  defer { removeGeneratedLog(path) }
  guard let child = reportInChild(path, objects: objects) else {
    figures.add("report_large_error", "the report child did not run")
    return
  }
  figures.add("report_large_log_mb", Double(bytes) / 1_000_000)
  figures.add("report_large_log_objects", objects)
  figures.add("report_large_mb_per_s", Double(bytes) / 1_000_000 / child.analysisSeconds)
  // The report's process: its peak, and how much of it the report added to what the process
  // held before it (the binary, the runtime).
  figures.add("report_large_peak_rss_mb", Double(child.peakBytes) / 1_000_000)
  figures.add("report_large_rss_growth_mb", Double(child.growthBytes) / 1_000_000)
  figures.add("report_large_peak_rss_vs_log_size_ratio", Double(child.peakBytes) / Double(bytes))
  figures.add("report_large_peak_rss_target_mb", 100)
  figures.add("report_large_meets_target", child.peakBytes < 100_000_000)
}

/// The argument that makes the bench run ``reportChild(_:)`` instead of figures.
let reportChildArgument = "--report-child"

/// One report, as `dealloctrace report --format json` makes it (the analysis, then the
/// document), in this process, which runs nothing else: prints the reading thread's CPU
/// seconds for the analysis, the objects it counted, and the resident set before it and at
/// its peak (`VmHWM`, read here: a spawned child's `ru_maxrss` starts from its parent's).
///
/// Why a process of its own: in the bench's, the peak counted what its earlier groups had
/// left resident, which over the 1 GB log was most of the figure and moved from run to run.
func reportChild(_ path: String) {
  let baseline = currentResidentBytes()
  var report: Report?
  let seconds = cpuTime { report = try? DeallocAnalysis.analyze([path]) }
  guard let report else { exit(1) }
  let size = renderedJSONSize(of: report)
  precondition(size > 0, "the report rendered nothing")
  print(seconds, report.summary.enqueued, baseline, peakResidentBytes())
}

/// What ``reportChild(_:)`` measured.
struct ChildReport {
  /// CPU seconds of the reading thread for the analysis.
  var analysisSeconds: Double
  var baselineBytes: Int
  var peakBytes: Int
  var growthBytes: Int { max(0, peakBytes - baselineBytes) }
}

/// Runs ``reportChild(_:)`` on `path`, a log of `objects` objects; nil when it failed.
func reportInChild(_ path: String, objects: Int) -> ChildReport? {
  guard let output = runBenchChild([reportChildArgument, path]) else { return nil }
  let fields = output.split(separator: " ")
  guard fields.count == 4, let seconds = Double(fields[0]), let enqueued = Int(fields[1]),
    let baseline = Int(fields[2]), let peak = Int(fields[3])
  else { return nil }
  precondition(enqueued == objects, "the analysis lost objects")
  return ChildReport(analysisSeconds: seconds, baselineBytes: baseline, peakBytes: peak)
}

/// A visitor that only counts, so that its time is the reader's.
private struct CountingVisitor: LogVisitor {
  var records = 0
  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    records += 1
  }
  mutating func warn(_ warning: LogWarning) {}
}

/// CPU time of `body` on the calling thread, in seconds.
func cpuTime(_ body: () -> Void) -> Double {
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
func runWc(_ path: String) -> Double {
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
func resetPeakMemory() {
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

func peakResidentBytes() -> Int { statusField("VmHWM") }
func currentResidentBytes() -> Int { statusField("VmRSS") }
