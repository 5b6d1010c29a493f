import CHolders
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// What allocation stacks (`DEALLOCTRACE_ALLOC_STACKS=1`) cost each Swift allocation. The
// tables start with the registry as the process loads, so the figure runs in a child with
// both variables set; in it, rounds alternate stacks on, stacks switched off (holders alone:
// the allocation's floor) and an unwind of the same depth alone, so one run gives both
// ratios.

/// The argument that makes the bench run the allocation-stack child.
let allocationStackChildArgument = "--alloc-stack-child"

/// Allocations (or unwinds) one timed round makes.
private let allocationsPerRound: UInt64 = 500_000
/// Rounds of each kind; the fastest is the figure (the least disturbed on a shared VM).
private let allocationStackRounds = 7
/// Objects kept alive for the memory figure, made with stacks off and then on.
private let liveObjectsMeasured = 200_000

/// What is allocated: no stored properties and no deinit, as
/// `cholders_bench_alloc_free_ns` requires (its instance is the 16-byte header).
private final class StackedObject {}

/// Calls `body` from `depth` frames further down the stack, so that every unwind in the
/// child finds the full `CHOLDERS_ALLOC_STACK_DEPTH` frames above it, as in a real program, and
/// not a short benchmark stack.
@inline(never)
private func fromDeeperStack(_ depth: Int, _ body: () -> Void) {
  if depth == 0 {
    body()
  } else {
    fromDeeperStack(depth - 1, body)
  }
  _ = getpid()  // not a tail call: each level keeps its frame
}

/// Frames `fromDeeperStack` adds: more than the stacks' depth.
private let addedFrames = Int(CHOLDERS_ALLOC_STACK_DEPTH) + 8

/// The child's side: `{"on":ns,"off":ns,"unwind":ns,"libunwind":ns,"dropped":n,…}`, CPU
/// nanoseconds per allocation+free with stacks, without, per unwind, and per libunwind
/// `unw_backtrace` of the same depth (the walk's reference).
func allocationStackChild() {
  fromDeeperStack(addedFrames, measureAllocationStacks)
}

private func measureAllocationStacks() {
  let metadata = unsafeBitCast(StackedObject.self, to: UnsafeRawPointer.self)
  guard cholders_bench_set_alloc_stacks(1) >= 0 else {
    print("{\"error\":\"allocation stacks did not start\"}")
    return
  }
  var on = Double.infinity
  var off = Double.infinity
  var unwind = Double.infinity
  var libunwind = Double.infinity
  for _ in 0..<allocationStackRounds {
    _ = cholders_bench_set_alloc_stacks(1)
    on = min(on, cholders_bench_alloc_free_ns(metadata, 16, allocationsPerRound))
    _ = cholders_bench_set_alloc_stacks(0)
    off = min(off, cholders_bench_alloc_free_ns(metadata, 16, allocationsPerRound))
    unwind = min(unwind, cholders_bench_unwind_ns(allocationsPerRound))
    libunwind = min(libunwind, cholders_bench_libunwind_ns(allocationsPerRound))
  }
  let memory = bytesPerLiveObject()
  var counts = cholders_alloc_stack_counts()
  cholders_alloc_stack_stats(&counts)
  print(
    "{\"on\":\(on),\"off\":\(off),\"unwind\":\(unwind),\"libunwind\":\(libunwind),"
      + "\"dropped\":\(counts.dropped),"
      + "\"bytes_per_object\":\(memory)}")
}

/// What allocation stacks add to the resident memory per live object: the RSS growth of
/// `liveObjectsMeasured` objects made with stacks on, less that of as many made (and kept)
/// with them off, per object. The objects come from one call site, so the stacks are one.
private func bytesPerLiveObject() -> Double {
  _ = cholders_bench_set_alloc_stacks(0)
  let beforeOff = currentResidentBytes()
  let kept = (0..<liveObjectsMeasured).map { _ in StackedObject() }
  let growthOff = currentResidentBytes() - beforeOff
  _ = cholders_bench_set_alloc_stacks(1)
  let beforeOn = currentResidentBytes()
  let stacked = (0..<liveObjectsMeasured).map { _ in StackedObject() }
  let growthOn = currentResidentBytes() - beforeOn
  withExtendedLifetime((kept, stacked)) {}
  return Double(growthOn - growthOff) / Double(liveObjectsMeasured)
}

/// Allocation-stack figures: an allocation with stacks against holders alone and against
/// an unwind of the same depth plus that allocation, all from one child.
func allocationStackFigures(into figures: inout BenchFigures) {
  guard
    let output = runBenchChild(
      [allocationStackChildArgument],
      environment: ["DEALLOCTRACE_HOLDERS": "1", "DEALLOCTRACE_ALLOC_STACKS": "1"]),
    let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
    let on = object["on"] as? Double, let off = object["off"] as? Double,
    let unwind = object["unwind"] as? Double
  else {
    figures.add("alloc_stacks_error", "the allocation-stack child did not run")
    return
  }
  figures.add("alloc_stacks_alloc_free_on_ns", on)
  figures.add("alloc_stacks_alloc_free_off_ns", off)
  figures.add("alloc_stacks_unwind_ns", unwind)
  figures.add("alloc_stacks_on_over_off", on / off)
  figures.add("alloc_stacks_on_over_unwind_plus_off", on / (unwind + off))
  let libunwind = (object["libunwind"] as? Double) ?? .nan
  figures.add("alloc_stacks_libunwind_ns", libunwind)
  figures.add("alloc_stacks_unwind_over_libunwind", unwind / libunwind)
  figures.add("alloc_stacks_dropped", (object["dropped"] as? Int) ?? -1)
  figures.add("alloc_stacks_bytes_per_live_object", (object["bytes_per_object"] as? Double) ?? .nan)
}
