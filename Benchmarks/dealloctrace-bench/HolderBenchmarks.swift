import CHolders
import DeallocTrace
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// What holder paths (issue 10, `DEALLOCTRACE_HOLDERS=1`) cost. The runtime hooks and the
// registry are per process and start as the process loads, so every figure with holders on
// runs this executable again as a child (`--holder-child KIND`) with and without the
// variable, and compares the two children of the same run.

/// The argument that makes the bench run one holder measurement as a child.
let holderChildArgument = "--holder-child"

/// Objects and bytes of the heap the scan figure builds: the issue's 50 MB with 450k
/// objects (each `ScanObject` is a 128-byte malloc chunk).
private let scanHeapObjects = 450_000
/// How many retain+release pairs, or allocations, one timed round makes.
private let operationsPerRound: UInt64 = 2_000_000
/// Timed rounds per child; the fastest is the figure (the least disturbed on a shared VM).
private let roundsPerChild = 7
/// Child runs of `StressChild feed` per variant, interleaved.
private let feedRuns = 3
/// The screens of the `StressChild feed` figure (as `scripts/compare-tools`).
private let feedScreens = 50

private final class BenchObject {
  var value = 0
}

/// What the allocation figure allocates: no stored properties and no deinit, as
/// `cholders_bench_alloc_free_ns` requires (its instance is the 16-byte header).
private final class EmptyObject {}
/// `EmptyObject`'s instance size: the object header alone.
private let emptyObjectSize = 16

/// 16 bytes of header and 104 of fields: a 128-byte chunk.
private final class ScanObject {
  var fields: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

/// The object the scan looks for, held by a global through one more object.
private final class ScanHolder {
  var held: BenchObject?
}

nonisolated(unsafe) private var scanRoot: ScanHolder?
nonisolated(unsafe) private var scanHeap: [ScanObject] = []

/// The fastest of `roundsPerChild` rounds of `round`, which returns CPU nanoseconds per
/// operation (CHolders' C loops over the runtime's entry points: Swift's optimizer would
/// merge or drop refcount operations of a Swift loop).
private func fastestRound(_ round: () -> Double) -> Double {
  var best = Double.infinity
  for _ in 0..<roundsPerChild { best = min(best, round()) }
  return best
}

/// The child's side: one measurement, printed as one number (or `scan` figures as JSON).
func holderChild(_ kind: String) {
  switch kind {
  case "pairs":
    let object = BenchObject()
    let pointer = Unmanaged.passUnretained(object).toOpaque()
    print(fastestRound { cholders_bench_retain_release_ns(pointer, operationsPerRound) })
    withExtendedLifetime(object) {}
  case "alloc":
    let metadata = unsafeBitCast(EmptyObject.self, to: UnsafeRawPointer.self)
    print(
      fastestRound {
        cholders_bench_alloc_free_ns(metadata, emptyObjectSize, operationsPerRound)
      })
  case "scan":
    scanHeap.reserveCapacity(scanHeapObjects)
    for _ in 0..<scanHeapObjects { scanHeap.append(ScanObject()) }
    let target = BenchObject()
    scanRoot = ScanHolder()
    scanRoot?.held = target
    var best = Double.infinity
    var bestCPU = Double.infinity
    var found = false
    for _ in 0..<3 {
      let start = DispatchTime.now().uptimeNanoseconds
      let json = DeallocTrace.holdersJSON(of: target, others: 1)
      let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
      var stats = cholders_scan_stats()
      cholders_last_scan_stats(&stats)
      best = min(best, elapsed)
      bestCPU = min(bestCPU, Double(stats.cpu_us) / 1e3)
      found = json?.contains(#""field":"held""#) ?? false
    }
    print(
      "{\"ms\":\(best),\"cpu_ms\":\(bestCPU),\"live\":\(cholders_live_count()),"
        + "\"found\":\(found)}")
  default:
    print("nan")
  }
}

/// Runs this executable as a holder child; its stdout, trimmed, or nil when it failed.
private func runHolderChild(_ kind: String, holders: Bool) -> String? {
  runBenchChild(
    [holderChildArgument, kind], environment: holders ? ["DEALLOCTRACE_HOLDERS": "1"] : [:])
}

/// Holder figures: the hooks' cost on retain/release and allocation, one scan of a large
/// heap, and a whole workload, each against its floor from the same run.
func holderFigures(into figures: inout BenchFigures) {
  // Children alternate, so that drift of the machine hits both sides alike.
  var pairsOff = Double.infinity
  var pairsOn = Double.infinity
  var allocOff = Double.infinity
  var allocOn = Double.infinity
  for _ in 0..<2 {
    pairsOff = min(pairsOff, runHolderChild("pairs", holders: false).flatMap(Double.init) ?? .nan)
    pairsOn = min(pairsOn, runHolderChild("pairs", holders: true).flatMap(Double.init) ?? .nan)
    allocOff = min(allocOff, runHolderChild("alloc", holders: false).flatMap(Double.init) ?? .nan)
    allocOn = min(allocOn, runHolderChild("alloc", holders: true).flatMap(Double.init) ?? .nan)
  }
  figures.add("holders_retain_release_off_ns", pairsOff)
  figures.add("holders_retain_release_on_ns", pairsOn)
  figures.add("holders_retain_release_on_over_off", pairsOn / pairsOff)
  figures.add("holders_alloc_free_off_ns", allocOff)
  figures.add("holders_alloc_free_on_ns", allocOn)
  figures.add("holders_alloc_free_on_over_off", allocOn / allocOff)

  if let scan = runHolderChild("scan", holders: true),
    let object = try? JSONSerialization.jsonObject(with: Data(scan.utf8)) as? [String: Any]
  {
    figures.add("holders_scan_heap_objects", (object["live"] as? Int) ?? 0)
    figures.add("holders_scan_ms", (object["ms"] as? Double) ?? .nan)
    figures.add("holders_scan_cpu_ms", (object["cpu_ms"] as? Double) ?? .nan)
    figures.add("holders_scan_found_holder", (object["found"] as? Bool) ?? false)
  } else {
    figures.add("holders_scan_error", "the scan child did not run")
  }

  feedFigures(into: &figures)
}

/// `StressChild feed 50` natively, traced, traced with holders, and with the holder hooks
/// alone (no session, no scan: what the hooks and the registry cost by themselves): wall
/// time per variant (the fastest of `feedRuns`), as ratios to the native run of the same
/// bench run.
private func feedFigures(into figures: inout BenchFigures) {
  guard let child = stressChild() else {
    figures.add(
      "holders_feed_error", "no release StressChild (swift build -c release --product StressChild)")
    return
  }
  let log = "/tmp/dealloctrace-bench-feed.\(getpid()).jsonl"
  defer { unlink(log) }
  let variants: [(name: String, environment: [String: String])] = [
    ("native", [:]),
    ("traced", ["DEALLOCTRACE_LOG": log]),
    ("holders", ["DEALLOCTRACE_LOG": log, "DEALLOCTRACE_HOLDERS": "1"]),
    // The hooks and the registry alone: no session, so no scan.
    ("hooks", ["DEALLOCTRACE_HOLDERS": "1"]),
  ]
  var best: [String: Double] = [:]
  var bestCPU: [String: Double] = [:]
  for _ in 0..<feedRuns {
    for variant in variants {
      unlink(log)
      guard
        let run = timedRun(child, ["feed", String(feedScreens)], variant.environment)
      else {
        figures.add("holders_feed_error", "StressChild feed failed (\(variant.name))")
        return
      }
      best[variant.name] = min(best[variant.name] ?? .infinity, run.wall)
      bestCPU[variant.name] = min(bestCPU[variant.name] ?? .infinity, run.cpu)
    }
  }
  // Wall time, and CPU time (user + system), which a machine shared with other work
  // disturbs less.
  for (name, key) in [
    ("native", "native"), ("traced", "traced"), ("holders", "holders"),
    ("hooks_only", "hooks"),
  ] {
    figures.add("feed_\(name)_s", best[key] ?? .nan)
    figures.add("feed_\(name)_cpu_s", bestCPU[key] ?? .nan)
    guard key != "native" else { continue }
    figures.add("feed_\(name)_over_native", (best[key] ?? .nan) / (best["native"] ?? .nan))
    figures.add(
      "feed_\(name)_cpu_over_native", (bestCPU[key] ?? .nan) / (bestCPU["native"] ?? .nan))
  }
}

/// The release `StressChild` beside this executable, built when missing.
private func stressChild() -> String? {
  let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent()
  let child = directory.appendingPathComponent("StressChild").path
  if FileManager.default.isExecutableFile(atPath: child) { return child }
  let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  let build = Process()
  build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  build.arguments = [
    "swift", "build", "-c", "release", "--product", "StressChild", "--ignore-lock",
    "--package-path", packageRoot.path,
  ]
  build.standardOutput = FileHandle.standardError
  guard (try? build.run()) != nil else { return nil }
  build.waitUntilExit()
  return FileManager.default.isExecutableFile(atPath: child) ? child : nil
}

/// The CPU time (user + system) of the children waited for so far, in seconds.
private func childrenCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
  func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `executable` to completion; its wall and CPU time in seconds, nil when it failed.
private func timedRun(_ executable: String, _ arguments: [String], _ extra: [String: String])
  -> (wall: Double, cpu: Double)?
{
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  process.environment = childEnvironment(extra)
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  let cpuBefore = childrenCPUSeconds()
  let start = DispatchTime.now().uptimeNanoseconds
  guard (try? process.run()) != nil else { return nil }
  process.waitUntilExit()
  let elapsed = DispatchTime.now().uptimeNanoseconds - start
  guard process.terminationStatus == 0 else { return nil }
  return (Double(elapsed) / 1e9, childrenCPUSeconds() - cpuBefore)
}
