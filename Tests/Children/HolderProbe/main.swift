// A child process for the CHolders tests: builds one holder scenario, scans for who holds
// its target, and prints the scan's answer as JSON on one line (`HOLDERS <json>`).
//
// Each scenario keeps its target reachable only through the references it means to test:
// the target's address travels as an integer scrambled with `scramble` (a plain address in
// a global would itself be a holder), and the scan skips the calling thread's own stack.
//
// Usage: HolderProbe [enable] SCENARIO... [stats], with DEALLOCTRACE_HOLDERS=1 to start the
// registry at load (`enable` starts it from code instead). `bench-hooks` (run without
// DEALLOCTRACE_HOLDERS) prints the hook costs; `big stats` the cost of one scan of a
// 450k-object heap (`big-heap stats` with a heap word as well, which adds the walk of the
// malloc chunks).

import CHolders
import Dispatch
import Foundation
import Synchronization

/// Scrambles an address so that the integer kept in a global is no holder.
let scramble: UInt = 0x5a5a_5a5a_5a5a_5a5a

func address(of object: AnyObject) -> UInt {
  UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
}

/// Scans for the holders of the object at `scrambled ^ scramble`; prints and returns JSON.
@discardableResult
func scan(_ scrambled: UInt, depth: Int32 = 6, paths: Int32 = 8) -> String {
  scan([scrambled], depth: depth, paths: paths)
}

/// Scans for several targets in one call.
@discardableResult
func scan(_ scrambled: [UInt], depth: Int32 = 6, paths: Int32 = 8) -> String {
  let targets = scrambled.map { $0 ^ scramble }
  print("TARGETS \(targets.map { "0x" + String($0, radix: 16) }.joined(separator: " "))")
  let json = targets.withUnsafeBufferPointer { buffer in
    scanJSON(buffer.baseAddress, buffer.count, depth: depth, paths: paths) ?? "nil"
  }
  print("HOLDERS \(json)")
  return json
}

/// The scan's answer for the `count` targets at `targets` as one JSON array, each element
/// the HOLDERS-VALUE the C writer spells from the data (`cholders_holders_json`); nil when
/// the scan failed.
func scanJSON(_ targets: UnsafePointer<UInt>?, _ count: Int, depth: Int32, paths: Int32)
  -> String?
{
  guard let answer = cholders_scan(targets, count, depth, paths, 0) else { return nil }
  defer { cholders_scan_free(answer) }
  var values: [String] = []
  for index in 0..<answer.pointee.count {
    guard let text = cholders_holders_json(answer.pointee.targets + index) else { return nil }
    values.append(String(cString: text))
    cholders_free(text)
  }
  return "[" + values.joined(separator: ",") + "]"
}

// MARK: - Scenarios

final class Thumb {
  var pixels = [UInt8](repeating: 7, count: 16)
}

final class ImageCache {
  nonisolated(unsafe) static let shared = ImageCache()
  var keep: [AnyObject] = []
}

/// A global array cache: `ImageCache.shared.keep[2]` holds the target.
@inline(never)
func arrayCache() -> UInt {
  for _ in 0..<3 { ImageCache.shared.keep.append(Thumb()) }
  return address(of: ImageCache.shared.keep[2]) ^ scramble
}

final class CartModel {
  var name = "cart"
  var onChange: (() -> Void)?
  func poke() { name += "!" }
}

/// A closure that captures only `self`: the object is its own closure context.
@inline(never)
func closureSelf() -> UInt {
  let model = CartModel()
  model.onChange = { model.poke() }
  return address(of: model) ^ scramble
}

/// A closure with more captures: a real context (captures CartModel, String).
@inline(never)
func closureMore(_ label: String) -> UInt {
  let model = CartModel()
  model.onChange = {
    model.name = label
  }
  return address(of: model) ^ scramble
}

/// A closure capturing a `var`: the variable lives in a box that the closure holds.
@inline(never)
func closureVar() -> UInt {
  var model = CartModel()
  model.onChange = { model.poke() }
  let result = address(of: model) ^ scramble
  if result == 0 { model = CartModel() }  // a mutation keeps `model` a var in a box
  return result
}

final class Child: @unchecked Sendable {
  var value = 1
}

final class Holder {
  var child: Child? = Child()
}

nonisolated(unsafe) let globalHolder = Holder()

/// A global -> property -> object chain.
@inline(never)
func chain() -> UInt {
  address(of: globalHolder.child!) ^ scramble
}

final class Watcher {
  unowned let watched: Child
  weak var weakly: Child?
  init(_ child: Child) {
    watched = child
    weakly = child
  }
}

nonisolated(unsafe) let weakHolder = Holder()
nonisolated(unsafe) var watcher: Watcher?

/// Weak and unowned references are no holders: only `weakHolder.child` holds the target
/// (the weak reference gives it a side table whose back pointer is no holder either).
@inline(never)
func weakAndUnowned() -> UInt {
  let child = weakHolder.child!
  watcher = Watcher(child)
  return address(of: child) ^ scramble
}

nonisolated(unsafe) var mallocBuffer: UnsafeMutablePointer<Child>?

/// An object held only from malloc memory (not a Swift object): a heap root.
@inline(never)
func mallocHeld() -> UInt {
  let buffer = UnsafeMutablePointer<Child>.allocate(capacity: 1)
  buffer.initialize(to: Child())
  mallocBuffer = buffer
  return address(of: buffer.pointee) ^ scramble
}

nonisolated(unsafe) var countedKeep: [Child] = []
nonisolated(unsafe) var countedWatchers: [Watcher] = []
nonisolated(unsafe) var countedBuffers: [UnsafeMutablePointer<UInt>] = []

/// Words that the targets' strong counts tell apart, in one scan of four targets, each
/// also pointed at from a live malloc buffer (memory that is no Swift object):
/// - a stale copy beside a global that holds it (its only strong reference): left out;
/// - the same with a weak reference, so that its count lives in a side table: left out;
/// - an owning reference (`Unmanaged.passRetained`) beside a global, with a weak
///   reference: two strong references, so the buffer's word stays a `heap` holder;
/// - the same without the weak reference.
@inline(never)
func countedWords() {
  let targets = (0..<4).map { _ in Child() }
  countedKeep = targets
  countedWatchers = [Watcher(targets[1]), Watcher(targets[2])]
  for (index, target) in targets.enumerated() {
    let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
    buffer.initialize(repeating: 0, count: 4)
    buffer[1] =
      index < 2 ? address(of: target) : UInt(bitPattern: Unmanaged.passRetained(target).toOpaque())
    countedBuffers.append(buffer)
  }
  scan(targets.map { address(of: $0) ^ scramble })
}

nonisolated(unsafe) var freedKeepSmall: Child?
nonisolated(unsafe) var freedKeepLarge: Child?
nonisolated(unsafe) var liveBuffer: UnsafeMutablePointer<Child>?
nonisolated(unsafe) var largeGuard: UnsafeMutablePointer<UInt>?

/// Stale words in freed malloc memory are no holders; a live malloc buffer still is one.
/// Three targets in one scan: one kept by a global and also written into a small buffer
/// that is then freed (a tcache chunk), one kept by a global and also written near the end
/// of a 2 KiB buffer that is then freed (an unsorted-bin chunk: a live guard allocation
/// after it keeps it out of the top chunk; the word sits at its end so that a small
/// allocation split off its front leaves it free), and one held only by a live buffer.
/// The targets array is made before the frees and nothing is printed between the frees
/// and the scan, so no allocation reuses the freed chunks first.
@inline(never)
func freedBuffers() {
  let small = Child()
  let large = Child()
  freedKeepSmall = small
  freedKeepLarge = large
  let live = UnsafeMutablePointer<Child>.allocate(capacity: 1)
  live.initialize(to: Child())
  liveBuffer = live
  let targets = [address(of: small), address(of: large), address(of: live.pointee)]
  let smallBuffer = UnsafeMutablePointer<UInt>.allocate(capacity: 8)
  smallBuffer.initialize(repeating: 0, count: 8)
  smallBuffer[5] = targets[0]
  let largeBuffer = UnsafeMutablePointer<UInt>.allocate(capacity: 256)
  largeBuffer.initialize(repeating: 0, count: 256)
  largeBuffer[250] = targets[1]
  largeGuard = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
  smallBuffer.deallocate()
  largeBuffer.deallocate()
  let json = targets.withUnsafeBufferPointer { buffer in
    scanJSON(buffer.baseAddress, buffer.count, depth: 6, paths: 8) ?? "nil"
  }
  print("TARGETS \(targets.map { "0x" + String($0, radix: 16) }.joined(separator: " "))")
  print("HOLDERS \(json)")
}

nonisolated(unsafe) var freedKeepThread: Child?

/// The word `freedOnThread`'s thread writes into the buffers it frees.
nonisolated(unsafe) var freedOnThreadWord: UInt = 0

/// The size of the stack `freedOnThread` maps for its thread (ASan's frames are bigger).
let freedOnThreadStackSize = 1 << 20

/// A stale word in a buffer another thread allocated and freed (from that thread's own
/// malloc arena, a heap mapping of its own) is no holder either. The object is kept by a
/// global; the address travels scrambled into the thread (its closure context would hold
/// it). The thread runs on a stack mapped here and unmapped after the join: glibc would
/// cache a stack of its own, with the thread's stale slots in it, and under ASan that cached
/// stack is classed as heap when its guard page merges with the allocator's reservation.
@inline(never)
func freedOnThread() {
  let child = Child()
  freedKeepThread = child
  let targets = [address(of: child)]
  freedOnThreadWord = targets[0] ^ scramble
  // A pthread joined before the scan, not a `Thread` that signals: the exiting thread moves
  // its tcache to the arena's bins after its body returns, and a scan that ran before that
  // saw the small buffer as a live chunk (a heap holder) on a loaded machine.
  let stack = mmap(
    nil, freedOnThreadStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
  precondition(stack != MAP_FAILED, "mmap failed")
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  precondition(pthread_attr_setstack(&attributes, stack, freedOnThreadStackSize) == 0)
  var thread = pthread_t()
  let created = pthread_create(
    &thread, &attributes,
    { _ in
      // A new thread's first malloc attaches it to an arena of its own while there are
      // fewer arenas than the limit (8 per core). The small buffer goes to a tcache (moved
      // to a fastbin when the thread exits), the 2 KiB one to the unsorted bin.
      let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: 8)
      buffer.initialize(repeating: 0, count: 8)
      buffer[5] = freedOnThreadWord ^ scramble
      let large = UnsafeMutablePointer<UInt>.allocate(capacity: 256)
      large.initialize(repeating: 0, count: 256)
      large[250] = freedOnThreadWord ^ scramble
      let guardBuffer = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
      buffer.deallocate()
      large.deallocate()
      guardBuffer.deallocate()
      return nil
    }, nil)
  precondition(created == 0, "pthread_create failed")
  pthread_join(thread, nil)
  pthread_attr_destroy(&attributes)
  munmap(stack, freedOnThreadStackSize)
  let json = targets.withUnsafeBufferPointer { buffer in
    scanJSON(buffer.baseAddress, buffer.count, depth: 6, paths: 8) ?? "nil"
  }
  print("TARGETS 0x\(String(targets[0], radix: 16))")
  print("HOLDERS \(json)")
}

nonisolated(unsafe) var sharers: [Holder] = []

/// Three holders of one object, each reached from a global array.
@inline(never)
func sharedChild() -> UInt {
  let child = Child()
  for _ in 0..<3 {
    let holder = Holder()
    holder.child = child
    sharers.append(holder)
  }
  return address(of: child) ^ scramble
}

/// Threads allocating, sharing and releasing objects at once: no crash, the registry holds
/// at least the objects still alive in the middle (so a registry that counts nothing cannot
/// pass), and returns to where it started (every final release seen).
func stress() {
  let before = cholders_live_count()
  let during = stressWork()
  let after = cholders_live_count()
  print("STRESS before=\(before) during=\(during) alive=\(stressSharedCount) after=\(after)")
}

/// The objects the stress's threads share, alive while `stressWork` counts the registry.
let stressSharedCount = 64

/// Returns the registry's count once the threads are done and the shared objects still live.
@inline(never)
func stressWork() -> UInt64 {
  let shared = (0..<stressSharedCount).map { _ in Child() }
  DispatchQueue.concurrentPerform(iterations: 4) { worker in
    var kept: [Child] = []
    for i in 0..<100_000 {
      let child = Child()
      if i % 3 == 0 { kept.append(child) }
      if kept.count > 50 { kept.removeFirst(25) }
      let other = shared[(i + worker) % shared.count]
      var copies = [other, other, child]
      copies.removeLast()
      weak let weakly = copies.first
      _ = weakly?.value
    }
  }
  return withExtendedLifetime(shared) { cholders_live_count() }
}

/// A retained reference kept in tool memory is no holder: the scan finds nothing.
@inline(never)
func toolMemory() -> UInt {
  let memory = cholders_tool_memory(4096)!
  let child = Child()
  memory.storeBytes(of: Unmanaged.passRetained(child), as: Unmanaged<Child>.self)
  return address(of: child) ^ scramble
}

/// Keeps `object` in this frame's stack slot (inout takes its address) until released.
@inline(never)
func park(_ object: inout Child?, _ ready: DispatchSemaphore, _ release: DispatchSemaphore) {
  ready.signal()
  release.wait()
  object?.value += 1
}

nonisolated(unsafe) var parkedAddress: UInt = 0
nonisolated(unsafe) var parkedThread: Int32 = 0

/// An object held only by another thread's stack.
func threadStack() {
  let ready = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  let thread = Thread {
    var object: Child? = Child()
    parkedAddress = address(of: object!) ^ scramble
    parkedThread = Int32(cholders_thread_id())
    park(&object, ready, release)
  }
  thread.start()
  ready.wait()
  print("TID \(parkedThread)")
  scan(parkedAddress)
  release.signal()
}

/// The Swift 6.3 adapter crash repro and more: with the hooks on, long string literals
/// copied into arrays, dictionaries, closures, weak and unowned references, async tasks and
/// libdispatch must all work.
func survive() async {
  var strings: [String] = []
  for i in 0..<2000 {
    strings.append("a long string literal that is certainly not a small string, \(i % 3)")
    strings.append("another long immortal string literal, well past fifteen bytes")
  }
  var table: [String: Child] = [:]
  for (i, s) in strings.enumerated() where i % 7 == 0 { table[s + "\(i)"] = Child() }
  weak let weakChild = table.values.first
  let owner = Child()
  unowned let unownedChild = owner
  var closures: [() -> Int] = []
  for i in 0..<100 {
    let c = Child()
    closures.append { c.value + i + unownedChild.value + (weakChild?.value ?? 0) }
  }
  let total = closures.reduce(0) { $0 + $1() }
  let group = DispatchGroup()
  let queue = DispatchQueue(label: "probe", attributes: .concurrent)
  for _ in 0..<50 {
    queue.async(group: group) {
      let local = ["x": "a long string literal for the dispatch queue, long enough"]
      _ = local.count
    }
  }
  group.wait()
  let sum = await withTaskGroup(of: Int.self) { tasks in
    for i in 0..<50 {
      tasks.addTask {
        let s = "an async long string literal that is long enough \(i)"
        return s.count
      }
    }
    var sum = 0
    for await value in tasks { sum += value }
    return sum
  }
  print("SURVIVED \(strings.count) \(table.count) \(total) \(sum) live=\(cholders_live_count())")
}

final class BenchLeaf {
  var value = 0
}

final class BenchNode {
  var payload = [Int](repeating: 1, count: 6)
  var leaf = BenchLeaf()
  var next: BenchNode?
}

nonisolated(unsafe) var benchRoots: [BenchNode] = []

/// A process with a big heap (about 450k live objects, 50 MB): 150k nodes, each with an
/// array storage and a leaf, plus padding arrays. The target is a leaf in the middle.
@inline(never)
func bigHeap() -> UInt {
  benchRoots.reserveCapacity(150_000)
  for _ in 0..<150_000 { benchRoots.append(BenchNode()) }
  return address(of: benchRoots[75_000].leaf) ^ scramble
}

nonisolated(unsafe) var padding: [[UInt8]] = []
nonisolated(unsafe) var benchBuffer: UnsafeMutablePointer<UInt>?

final class Empty {}

/// Hook costs: the same C loops before and after `cholders_enable` (run without
/// DEALLOCTRACE_HOLDERS so the first half is really off).
func benchHooks() {
  let object = Empty()
  let pointer = Unmanaged.passUnretained(object).toOpaque()
  let metadata = unsafeBitCast(Empty.self as AnyClass, to: UnsafeRawPointer.self)
  func measure(_ label: String) {
    var pairs = [Double]()
    var allocs = [Double]()
    for _ in 0..<5 {
      pairs.append(cholders_bench_retain_release_ns(pointer, 2_000_000))
      allocs.append(cholders_bench_alloc_free_ns(metadata, 16, 1_000_000))
    }
    let pair = pairs.sorted()[2]
    let alloc = allocs.sorted()[2]
    print(
      "BENCH \(label) retain+release \(String(format: "%.1f", pair)) ns, alloc+free \(String(format: "%.1f", alloc)) ns"
    )
  }
  measure("off")
  _ = cholders_enable()
  measure("on")
  withExtendedLifetime(object) {}
}

// MARK: - Main

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "enable" { _ = cholders_enable() }
print(
  "STATE \(cholders_state()) LOAD \(cholders_started_at_load()) \(String(cString: cholders_problem()))"
)
print("ADAPTER_BUG \(cholders_runtime_had_adapter_bug())")
for scenario in arguments where scenario != "enable" {
  switch scenario {
  case "array": scan(arrayCache())
  case "closure-self": scan(closureSelf())
  case "closure-more": scan(closureMore("label-\(arguments.count)"))
  case "chain": scan(chain())
  case "closure-var": scan(closureVar())
  case "two": scan([chain(), arrayCache()])
  case "weak-unowned": scan(weakAndUnowned())
  case "malloc": scan(mallocHeld())
  case "counted-words": countedWords()
  case "freed-buffers": freedBuffers()
  case "freed-on-thread": freedOnThread()
  case "stress": stress()
  case "tool-memory": scan(toolMemory())
  case "chain-depth1": scan(chain(), depth: 1)
  case "shared": scan(sharedChild(), paths: 2)
  case "spread": scan(spread())
  case "unloaded": scan(unloadedImage())
  case "fork": forkWhileScanning(20)
  case "many": manyHolders()
  case "owner-255": scan(ownerAmong(255), paths: 2)
  case "owner-256": scan(ownerAmong(256), paths: 2)
  case "invalid-utf8": runFromInvalidUTF8Directory("chain")
  case "answer-edges": answerEdges()
  case "invalid-utf8-answer": runFromInvalidUTF8Directory("answer-edges")
  case "stride": scan(strideArray())
  case "regions": scan(manyRegions(8_300))
  case "threads": manyThreads(1_100)
  case "captures-16": scan(closure16Captures("c\(arguments.count)"))
  case "captures-17": scan(closure17Captures("c\(arguments.count)"))
  case "thread": threadStack()
  case "freed":
    var child: Child? = Child()
    let scrambled = address(of: child!) ^ scramble
    child = nil
    scan(scrambled)
  case "survive": await survive()
  case "bench-hooks": benchHooks()
  case "big":
    let target = bigHeap()
    // Non-pointer filler up to about 50 MB of heap.
    for _ in 0..<100 { padding.append([UInt8](repeating: 1, count: 200_000)) }
    print("LIVE \(cholders_live_count())")
    scan(target)
  case "big-heap":
    // `big`, plus a live malloc buffer holding the target: a heap word, so the scan also
    // walks the main arena's chunks (the cost of telling free chunks from live ones).
    let target = bigHeap()
    for _ in 0..<100 { padding.append([UInt8](repeating: 1, count: 200_000)) }
    let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
    buffer.initialize(repeating: target ^ scramble, count: 1)
    benchBuffer = buffer
    print("LIVE \(cholders_live_count())")
    scan(target)
  case "stats": break  // printed after all scenarios
  default: print("unknown scenario \(scenario)")
  }
}
if arguments.contains("stats") {
  var stats = cholders_scan_stats()
  cholders_last_scan_stats(&stats)
  print(
    "STATS objects=\(stats.objects) regions=\(stats.regions) bytes=\(stats.bytes) levels=\(stats.levels) snapshot_us=\(stats.snapshot_us) regions_us=\(stats.regions_us) passes_us=\(stats.passes_us) total_us=\(stats.total_us) cpu_us=\(stats.cpu_us) free_walk=\(stats.free_walk) free_walk_us=\(stats.free_walk_us) free_ranges=\(stats.free_ranges) spans_walked=\(stats.spans_walked) failed=\(stats.failed) proc_mem=\(stats.proc_mem)"
  )
}
