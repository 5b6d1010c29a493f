import CUnwind
import DeallocQueue
import DeallocTrace
import Dispatch
import Glibc

/// What the bench hands to the queue: a small object, so the figures are the queue's and
/// the tracer's cost, not a deinit's.
private final class TracedObject {
  var value = 0
}

/// One way of handing `objects` over; each variant is timed the same way.
private enum EnqueueVariant: CaseIterable {
  /// `releaseInBackgroundWithoutTracingHook`: the queue with no tracing code at all.
  case noHook
  /// `releaseInBackground` with tracing off: the hook's one branch.
  case hookOff
  /// `releaseInBackground` with tracing on (whatever session is recording).
  case traced
  /// No enqueue: the recorder's stack walk (`cunwind_backtrace`) at the same depth, the
  /// floor of a traced enqueue's stack capture.
  case rawUnwind
  /// No enqueue: libunwind's `unw_backtrace` at the same depth, the walk's reference.
  case libunwind
}

/// The objects of one round, made before the clock starts so that allocation is outside
/// every timing; the queue takes each one's last reference out of the array.
private func makeObjects(_ count: Int) -> [TracedObject?] {
  (0..<count).map { _ in TracedObject() }
}

/// Times `variant` over `objects` at the current stack depth; nanoseconds per object.
@inline(never)
private func timeEnqueues(
  _ variant: EnqueueVariant, _ objects: inout [TracedObject?], queue: DeallocQueue
) -> Double {
  let count = objects.count
  var frames = [UnsafeMutableRawPointer?](repeating: nil, count: DeallocTrace.defaultFrames)
  let start = DispatchTime.now().uptimeNanoseconds
  switch variant {
  case .noHook:
    for index in 0..<count { queue.releaseInBackgroundWithoutTracingHook(&objects[index]) }
  case .hookOff, .traced:
    for index in 0..<count { queue.releaseInBackground(&objects[index]) }
  case .rawUnwind:
    frames.withUnsafeMutableBufferPointer { buffer in
      for _ in 0..<count {
        _ = cunwind_backtrace(buffer.baseAddress, Int32(buffer.count))
      }
    }
  case .libunwind:
    frames.withUnsafeMutableBufferPointer { buffer in
      for _ in 0..<count {
        _ = cunwind_libunwind_backtrace(buffer.baseAddress, Int32(buffer.count))
      }
    }
  }
  let elapsed = DispatchTime.now().uptimeNanoseconds - start
  return Double(elapsed) / Double(count)
}

/// Calls `body` about `depth` frames below this one, so that backtraces are that deep.
@inline(never)
private func atDepth<R>(_ depth: Int, _ body: () -> R) -> R {
  if depth <= 0 { return body() }
  let result = atDepth(depth - 1, body)
  blackHole(depth)
  return result
}

@inline(never)
private func blackHole(_ value: Int) {
  if value == Int.min { print("unreachable") }
}

/// The stack depth `unw_backtrace` sees inside `atDepth(depth)`.
@inline(never)
private func stackDepth(at depth: Int) -> Int {
  atDepth(depth) {
    var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 256)
    return Int(cunwind_backtrace(&frames, 256))
  }
}

/// Runs every variant in `variants` for `rounds` rounds, interleaved so that drift of the
/// machine hits them alike, and returns each one's fastest round (the least disturbed).
/// A round is small enough for the tracer's buffer, and the writer catches up between
/// rounds (outside the timing), so the figure is the calling thread's cost; the writer's
/// own throughput is `writerNanoseconds`, per record, over the traced variant's rounds.
private func fastestRounds(
  _ variants: [EnqueueVariant], rounds: Int, perRound: Int, depth: Int, queue: DeallocQueue,
  writerNanoseconds: UnsafeMutablePointer<Double>? = nil
) -> [EnqueueVariant: Double] {
  var best: [EnqueueVariant: Double] = [:]
  var writerTotal: UInt64 = 0
  for _ in 0..<rounds {
    for variant in variants {
      var objects = makeObjects(perRound)
      let roundStart = DispatchTime.now().uptimeNanoseconds
      let nanoseconds = atDepth(depth) { timeEnqueues(variant, &objects, queue: queue) }
      queue.drain()
      DeallocTrace.flush()
      if variant == .traced { writerTotal += DispatchTime.now().uptimeNanoseconds - roundStart }
      best[variant] = min(best[variant] ?? .infinity, nanoseconds)
    }
  }
  // Each object makes two records (enqueue and release).
  let tracedRounds = rounds * variants.filter { $0 == .traced }.count
  writerNanoseconds?.pointee = Double(writerTotal) / Double(tracedRounds * perRound * 2)
  return best
}

/// Enqueue cost with tracing off, on with no stacks, and on with the default depth at a
/// deep call stack, each against its floor from the same run.
func tracingFigures(into figures: inout BenchFigures) {
  let queue = DeallocQueue(label: "bench-trace", delay: .seconds(3600))
  let perRound = 4_000
  let rounds = 40
  let depth = 26
  let logPath = "/tmp/dealloctrace-bench.\(getpid()).jsonl"
  defer { unlink(logPath) }
  DeallocTrace.finish()
  guard !DeallocTrace.isEnabled else {
    figures.add("tracing_error", "tracing was already on from the environment")
    return
  }

  // Warm-up: first unwinds in a thread cost ~150 µs, first enqueues grow the arrays.
  _ = fastestRounds(
    EnqueueVariant.allCases, rounds: 2, perRound: perRound, depth: depth, queue: queue)

  // Off against no hook at all.
  let off = fastestRounds(
    [.noHook, .hookOff], rounds: rounds, perRound: perRound, depth: 0, queue: queue)

  var traced = TracedFigures()
  do {
    try measureTraced(
      into: &traced, rounds: rounds, perRound: perRound, depth: depth, queue: queue,
      logPath: logPath)
  } catch {
    figures.add("tracing_error", "\(error)")
  }

  let noHook = off[.noHook] ?? .nan
  let hookOff = off[.hookOff] ?? .nan
  let deepNoHook = traced.deepNoHook
  let rawUnwind = traced.rawUnwind
  figures.add("trace_stack_depth", stackDepth(at: depth))
  figures.add("trace_frames", DeallocTrace.defaultFrames)
  figures.add("enqueue_no_hook_ns", noHook)
  figures.add("enqueue_tracing_off_ns", hookOff)
  figures.add("enqueue_off_over_no_hook", hookOff / noHook)
  figures.add("enqueue_tracing_on_0_frames_ns", traced.zeroFrames)
  figures.add("enqueue_tracing_on_deep_ns", traced.deep)
  figures.add("unwind_deep_ns", rawUnwind)
  figures.add("unw_backtrace_deep_ns", traced.libunwind)
  figures.add("unwind_over_unw_backtrace_deep", rawUnwind / traced.libunwind)
  figures.add("enqueue_no_hook_deep_ns", deepNoHook)
  figures.add("enqueue_on_over_unwind_plus_no_hook", traced.deep / (rawUnwind + deepNoHook))
  figures.add(
    "enqueue_on_over_unw_backtrace_plus_no_hook", traced.deep / (traced.libunwind + deepNoHook))
  figures.add("log_bytes_per_object", traced.bytesPerObject)
  // Wall time per record from the first enqueue to the record being in the file, calling
  // thread included: the sustained rate beyond which back-pressure slows the caller.
  figures.add("trace_sustained_ns_per_record", traced.writerPerRecord)
}

/// The figures of the runs with tracing on; `nan` for those a failure to start left unrun.
private struct TracedFigures {
  /// Nanoseconds per enqueue, recording no stack frames.
  var zeroFrames = Double.nan
  /// Nanoseconds per enqueue, recording the default number of frames at a deep stack.
  var deep = Double.nan
  /// Its floors, timed in the same rounds: an enqueue with no hook, and the recorder's walk,
  /// at that depth; and libunwind's `unw_backtrace` there, the walk's reference.
  var deepNoHook = Double.nan
  var rawUnwind = Double.nan
  var libunwind = Double.nan
  /// Log bytes per object of the deep run.
  var bytesPerObject = Double.nan
  /// The writer's sustained nanoseconds per record in the deep run.
  var writerPerRecord = Double.nan
}

/// Records a session with no stacks, then one with the default depth, each into a fresh
/// `logPath`. Fills `traced` as it goes, so that a failure to start the second session
/// keeps the first one's figure.
private func measureTraced(
  into traced: inout TracedFigures, rounds: Int, perRound: Int, depth: Int,
  queue: DeallocQueue, logPath: String
) throws {
  unlink(logPath)
  try DeallocTrace.start(path: logPath, frames: 0)
  traced.zeroFrames =
    fastestRounds([.traced], rounds: rounds, perRound: perRound, depth: depth, queue: queue)[
      .traced] ?? .nan
  DeallocTrace.finish()

  // The floors' rounds interleaved with the traced ones (neither floor records anything):
  // timed in a block of their own before tracing started, they met other phases of this
  // VM than the traced enqueue did, and the ratio ranged from 1.07 to 2.10 over a dozen runs.
  unlink(logPath)
  try DeallocTrace.start(path: logPath, frames: DeallocTrace.defaultFrames)
  var writerPerRecord = Double.nan
  let deep = fastestRounds(
    [.noHook, .rawUnwind, .libunwind, .traced], rounds: rounds, perRound: perRound, depth: depth,
    queue: queue, writerNanoseconds: &writerPerRecord)
  traced.deep = deep[.traced] ?? .nan
  traced.deepNoHook = deep[.noHook] ?? .nan
  traced.rawUnwind = deep[.rawUnwind] ?? .nan
  traced.libunwind = deep[.libunwind] ?? .nan
  traced.writerPerRecord = writerPerRecord
  DeallocTrace.finish()
  var status = stat()
  if stat(logPath, &status) == 0 {
    // Only the traced rounds record objects (the floors' rounds add their drains' records).
    traced.bytesPerObject = Double(status.st_size) / Double(rounds * perRound)
  }
}
