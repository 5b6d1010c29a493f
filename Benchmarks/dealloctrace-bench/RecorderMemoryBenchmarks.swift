import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The argument that makes the bench run `recorderWorkload()` as a child instead of figures.
let recorderWorkloadArgument = "--recorder-workload"

/// What tracing costs the traced program in memory: the same workload run twice as a child
/// process of the bench, without and with `DEALLOCTRACE_LOG`, and each child's peak resident
/// set, which the child reads from its own `VmHWM` after `finish()` and prints. A child per
/// run, because the recorder's buffers, stack table and writer thread live for the whole
/// process. Not `wait4`'s `ru_maxrss`: Linux carries the spawning parent's peak into a
/// `posix_spawn`ed child's maximum (the exec inherits the high-water mark of the address
/// space it replaces), so once the bench itself had grown, both children reported its size.
func recorderMemoryFigures(into figures: inout BenchFigures) {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("dealloctrace-bench-memory-\(getpid())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let log = directory.appendingPathComponent("workload.jsonl").path

  guard let untraced = peakResidentKilobytes(tracingTo: nil),
    let traced = peakResidentKilobytes(tracingTo: log)
  else {
    figures.add("record_peak_rss_error", "the workload child did not run")
    return
  }
  let logBytes = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
  figures.add("record_workload_objects", recorderWorkloadObjects)
  figures.add("record_peak_rss_untraced_mb", Double(untraced) / 1024)
  figures.add("record_peak_rss_traced_mb", Double(traced) / 1024)
  figures.add("record_peak_rss_added_mb", Double(traced - untraced) / 1024)
  figures.add("record_peak_rss_traced_over_untraced", Double(traced) / Double(untraced))
  figures.add("record_log_mb", Double(logBytes) / 1_000_000)
}

/// How many objects the workload hands to the queues.
let recorderWorkloadObjects = 200_000

/// The child's work: objects from 50 distinct call sites handed to two queues in bursts,
/// with a drain after each burst, as a screen-by-screen app would.
func recorderWorkload() {
  let queues = [DeallocQueue(label: "screens"), DeallocQueue(label: "images")]
  let bursts = 100
  for burst in 0..<bursts {
    for index in 0..<(recorderWorkloadObjects / bursts) {
      handOver(site: index % 50, to: queues[burst % 2])
    }
    queues[burst % 2].drain()
  }
  DeallocTrace.finish()
  print(peakResidentBytes() / 1024)
}

private final class WorkloadObject {
  var payload = [Int](repeating: 0, count: 8)
}

/// Recurses `site` frames deep before the enqueue, so that the workload has 50 distinct
/// enqueue stacks, as a program with many call sites has.
@inline(never)
private func handOver(site: Int, to queue: DeallocQueue) {
  if site > 0 {
    handOver(site: site - 1, to: queue)
    return
  }
  var object: WorkloadObject? = WorkloadObject()
  queue.releaseInBackground(&object)
}

/// Runs this executable as the workload child and returns the peak RSS it reports, in KiB.
private func peakResidentKilobytes(tracingTo log: String?) -> Int? {
  let output = runBenchChild(
    [recorderWorkloadArgument], environment: log.map { ["DEALLOCTRACE_LOG": $0] } ?? [:])
  return output.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
}
