import CHolders
import DeallocTrace
import Dispatch
import Foundation

// What one whole-process census costs (issue 27, `DEALLOCTRACE_LEAKS=1`), on heaps of the
// sizes the issue names. The registry is per process and starts as the process loads, so
// each heap is built in a child of its own (`--census-child OBJECTS`), which also times the
// holder scan of the same heap as the floor: one pass over the same memory and registry.

/// The argument that makes the bench run one census measurement as a child.
let censusChildArgument = "--census-child"

/// The heaps: the holder scan's 450k objects (about 57 MB of 128-byte chunks) and the
/// issue's 5 million.
private let censusHeaps = [450_000, 5_000_000]
/// Leaked two-object cycles among the reachable objects, so that grouping is timed too.
private let leakedCycles = 1_000
/// Censuses per child; the fastest is the figure (the least disturbed on a shared VM).
private let censusRounds = 3

/// 16 bytes of header and 104 of fields: a 128-byte chunk, as the holder scan's heap.
private final class CensusObject {
  var next: CensusObject?
  var fields: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

nonisolated(unsafe) private var censusHeap: [CensusObject] = []

/// Leaks `leakedCycles` two-object cycles: garbage the census must find and group.
@inline(never)
private func leakCycles() {
  for _ in 0..<leakedCycles {
    let first = CensusObject()
    let second = CensusObject()
    first.next = second
    second.next = first
  }
}

/// The child's side: builds the heap, runs the census and the scan alternately, prints one
/// JSON object.
func censusChild(_ objects: Int) {
  censusHeap.reserveCapacity(objects)
  for _ in 0..<objects { censusHeap.append(CensusObject()) }
  leakCycles()
  let target = censusHeap[objects / 2]
  var census = Double.infinity
  var scan = Double.infinity
  var stats = cholders_census_stats()
  var found = false
  // The first census raises the peak (VmHWM, ReportBenchmarks.swift) by what it maps and
  // touches at most: the registry snapshot, its arrays and fixed buffers (the heap is built).
  let peakBefore = peakResidentBytes()
  var peakGrowth = 0
  for round in 0..<censusRounds {
    let start = DispatchTime.now().uptimeNanoseconds
    let json = cholders_census_json(nil, "bench", nil)
    census = min(census, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    if round == 0 { peakGrowth = peakResidentBytes() - peakBefore }
    if let json {
      found = strstr(json, "\"groups\"") != nil
      cholders_free(json)
    }
    cholders_last_census_stats(&stats)
    let scanStart = DispatchTime.now().uptimeNanoseconds
    _ = DeallocTrace.holdersJSON(of: target, others: 1)
    scan = min(scan, Double(DispatchTime.now().uptimeNanoseconds - scanStart) / 1e6)
  }
  print(
    "{\"census_ms\":\(census),\"scan_ms\":\(scan),\"objects\":\(stats.objects),"
      + "\"unreachable\":\(stats.unreachable),\"extra_bytes\":\(stats.extra_bytes),"
      + "\"fixed_bytes\":\(stats.fixed_bytes),\"peak_growth\":\(peakGrowth),\"ran\":\(found)}")
  withExtendedLifetime(target) {}
}

/// Census figures: one census of each heap, against the holder scan of the same heap in
/// the same child, and the census's own memory per live object.
func censusFigures(into figures: inout BenchFigures) {
  for objects in censusHeaps {
    let name = objects >= 1_000_000 ? "\(objects / 1_000_000)m" : "\(objects / 1_000)k"
    guard
      let output = runBenchChild(
        [censusChildArgument, String(objects)], environment: ["DEALLOCTRACE_HOLDERS": "1"]),
      let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
      let census = object["census_ms"] as? Double, let scan = object["scan_ms"] as? Double,
      let live = object["objects"] as? Int, let extra = object["extra_bytes"] as? Int
    else {
      figures.add("census_\(name)_error", "the census child did not run")
      continue
    }
    figures.add("census_\(name)_objects", live)
    figures.add("census_\(name)_unreachable", (object["unreachable"] as? Int) ?? -1)
    figures.add("census_\(name)_ms", census)
    figures.add("census_\(name)_scan_ms", scan)
    figures.add("census_\(name)_over_scan", census / scan)
    figures.add("census_\(name)_extra_bytes_per_object", Double(extra) / Double(max(live, 1)))
    let fixed = (object["fixed_bytes"] as? Int) ?? 0
    figures.add("census_\(name)_fixed_mb", Double(fixed) / 1_048_576)
    let peak = (object["peak_growth"] as? Int) ?? 0
    figures.add(
      "census_\(name)_peak_rss_growth_bytes_per_object", Double(peak) / Double(max(live, 1)))
  }
}
