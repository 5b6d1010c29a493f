import DeallocAnalysis
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The report on the logs users have (issue 11): a clean log and a leak-heavy one of 300,000
/// objects each, each next to two floors measured in the same run on the same file, `wc -l`
/// (reading bytes and finding newlines) and a ten-line Python `json.loads` loop (the
/// simplest parse anyone would write); then a log of 1,000,000 never-released objects next to
/// a clean log of as many objects, with the memory each pending object costs.
///
/// Wall time, best of ``reportRuns``, of the whole report (reading, analysis, the JSON
/// rendering): the analysis may use both cores, so the reading thread's CPU time would
/// undercount it. The process's CPU time (both threads) is printed beside it: on a shared
/// machine, wall time also counts the time other processes held the cores.
///
/// The two shapes' reports run alternately (clean, leak-heavy, clean, …), not one shape's
/// runs and then the other's: this VM's speed drifts by more than the code's differences
/// within seconds, and the leak-heavy ÷ clean ratio compared runs made in different phases
/// of it (the same binary's ratio ranged from 1.27× to 2.28× over six runs). Alternated, a slow phase
/// slows both shapes' runs alike. Beside the ratio of the two bests, the median of each
/// pair's ratio (a clean run and the leak-heavy one right after it, in the same phase of
/// the VM): where only one shape's runs met a fast moment, the bests' ratio moves and it
/// does not.
/// The floors are wall times of child processes, best of three for `wc -l`, one run for
/// Python (seconds long, so noise matters less).
func shapeFigures(into figures: inout BenchFigures) {
  let objects = 300_000
  let shapes: [(name: String, shape: LogShape)] = [("clean", .clean), ("leak_heavy", .leakHeavy)]
  let logs = shapes.map { generatedLog($0.shape, objects: objects) }
  defer { for log in logs { removeGeneratedLog(log.path) } }
  var runSeconds = Array(repeating: [Double](), count: shapes.count)
  var cpuSeconds = Array(repeating: Double.infinity, count: shapes.count)
  for _ in 0..<reportRuns {
    for (index, log) in logs.enumerated() {
      let before = processCPUSeconds()
      runSeconds[index].append(wallTime { precondition(fullReport(log.path) > 0) })
      cpuSeconds[index] = min(cpuSeconds[index], processCPUSeconds() - before)
    }
  }
  let reportSeconds = runSeconds.map { $0.min()! }
  let pairRatios = zip(runSeconds[1], runSeconds[0]).map { $0 / $1 }
  for (index, (name, _)) in shapes.enumerated() {
    let (path, bytes) = logs[index]
    let megabytes = Double(bytes) / 1_000_000
    _ = wallTime { runChild("/usr/bin/wc", ["-l", path]) }
    let wc = (0..<3).map { _ in wallTime { runChild("/usr/bin/wc", ["-l", path]) } }.min()!
    let python = wallTime { runChild("/usr/bin/env", ["python3", "-c", pythonLoop, path]) }
    let report = reportSeconds[index]
    figures.add("\(name)_log_mb", megabytes)
    figures.add("\(name)_log_objects", objects)
    figures.add("\(name)_report_seconds", report)
    figures.add("\(name)_report_mb_per_s", megabytes / report)
    figures.add("\(name)_report_cpu_seconds", cpuSeconds[index])
    figures.add("\(name)_wc_l_mb_per_s", megabytes / wc)
    figures.add("\(name)_python_json_mb_per_s", megabytes / python)
    figures.add("\(name)_report_time_vs_wc_l_ratio", report / wc)
    figures.add("\(name)_python_time_vs_report_ratio", python / report)
    figures.add("\(name)_meets_600_mb_per_s", megabytes / report >= 600)
  }
  figures.add(
    "shapes_clock", "wall seconds, best of \(reportRuns), the shapes alternated (python: 1 run)")
  figures.add("shapes_python_floor", "python3: for line in open(log): json.loads(line)")
  figures.add("leak_heavy_vs_clean_time_ratio", reportSeconds[1] / reportSeconds[0])
  figures.add("leak_heavy_vs_clean_paired_median_ratio", pairRatios.sorted()[reportRuns / 2])

  // A million objects never released, against a million released and freed, alternately.
  let millionObjects = 1_000_000
  let (cleanPath, cleanBytes) = generatedLog(.clean, objects: millionObjects)
  let (path, bytes) = generatedLog(.neverReleased, objects: millionObjects)
  defer {
    removeGeneratedLog(cleanPath)
    removeGeneratedLog(path)
  }
  var clean = Double.infinity
  var neverReleased = Double.infinity
  var growth = 0
  for _ in 0..<millionRuns {
    clean = min(clean, wallTime { precondition(fullReport(cleanPath) > 0) })
    resetPeakMemory()
    let baseline = currentResidentBytes()
    neverReleased = min(neverReleased, wallTime { precondition(fullReport(path) > 0) })
    growth = max(growth, peakResidentBytes() - baseline)
  }
  figures.add("never_released_log_mb", Double(bytes) / 1_000_000)
  figures.add("never_released_objects", millionObjects)
  figures.add("never_released_seconds", neverReleased)
  figures.add("never_released_clean_1m_log_mb", Double(cleanBytes) / 1_000_000)
  figures.add("never_released_clean_1m_seconds", clean)
  figures.add("never_released_vs_clean_time_ratio", neverReleased / clean)
  figures.add("never_released_rss_growth_mb", Double(growth) / 1_000_000)
  figures.add("never_released_bytes_per_pending_object", Double(growth) / Double(millionObjects))
}

/// Runs of each shape's report: each takes about a tenth of a second, so more runs cost
/// little and give the best of each shape a better chance of a quiet moment of the VM: with
/// fewer, one shape's best could come from a fast moment the other never met, and the
/// leak-heavy ÷ clean ratio moved with it (docs/benchmarks.md, eighth and tenth rounds).
/// Odd, so that the paired ratios have a middle one.
private let reportRuns = 15

/// Runs of each million-object report (about 0.2 s each), alternated; see ``reportRuns``.
private let millionRuns = 5

/// The Python floor: the line-by-line parse a user would write first.
private let pythonLoop = """
  import json, sys
  for line in open(sys.argv[1], 'rb'):
      json.loads(line)
  """

/// The report a user asks for: analysis and the JSON rendering. Returns the rendered size.
private func fullReport(_ path: String) -> Int {
  guard let report = try? DeallocAnalysis.analyze([path]) else { return 0 }
  return renderedJSONSize(of: report)
}

/// `report` rendered as `report --format json` renders it (the bytes it writes out); the
/// rendered size.
func renderedJSONSize(of report: Report) -> Int {
  JSONRenderer().withBytes(of: report) { $0.count }
}

/// Wall time of `body`, in seconds.
func wallTime(_ body: () -> Void) -> Double {
  var start = timespec()
  var end = timespec()
  clock_gettime(CLOCK_MONOTONIC, &start)
  body()
  clock_gettime(CLOCK_MONOTONIC, &end)
  return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
}

/// CPU time (user + system) of this process, all threads, in seconds: the work the report
/// did, whatever else the machine ran meanwhile.
func processCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `executable` with `arguments`, output discarded, and waits for it.
private func runChild(_ executable: String, _ arguments: [String]) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  process.standardOutput = FileHandle.nullDevice
  do {
    try process.run()
  } catch {
    fatalError("cannot run \(executable): \(error)")
  }
  process.waitUntilExit()
}
