// The child of the census tests: builds one leak scenario per argument, then either runs a
// census at once and prints its JSON (`json`, one line `CENSUS <json>`), or lets the
// census that DEALLOCTRACE_LEAKS=1 runs at exit report it.
//
// Usage: DEALLOCTRACE_LEAKS=1 CensusProbe SCENARIO... [json | checkpoint LABEL]
//
// Every scenario builds its objects in @inline(never) functions, so that -O keeps them on
// the heap and no frame of main holds them; the over-retain is a separate function from
// the construction (a Swift 6.3.1 -O crash, see docs/notes on the census).

import CHolders
import CensusProbeSupport
import DeallocHooks
import DeallocQueue
import DeallocTrace
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

// MARK: - Leaks

final class Order {
  var payment: Payment?
  let number = 1
}

final class Payment {
  var order: Order?
  let amount = 2
}

nonisolated(unsafe) var sink: AnyObject?

/// Makes `object` escape, so that -O cannot promote it to the stack (an object on the
/// stack never reaches the registry, and its cycle dies with the frame).
@_optimize(none)
func escape(_ object: AnyObject) {
  sink = object
  sink = nil
}

/// Order.payment → Payment.order → Order, dropped.
@inline(never)
func plainCycle() {
  let order = Order()
  let payment = Payment()
  order.payment = payment
  payment.order = order
  escape(order)
}

/// `plainCycle()` from `levels` more frames down the stack, as a program's allocations are
/// made: an allocation stack then holds as many frames as the recorder keeps.
@inline(never)
func deepCycle(_ levels: Int) {
  if levels == 0 {
    plainCycle()
  } else {
    deepCycle(levels - 1)
  }
  _ = getpid()  // not a tail call: each level keeps its frame
}

/// A cycle of one type through two fields: `reply` one way, `parent` back.
final class Note {
  var reply: Note?
  var parent: Note?
}

/// 200 Note pairs, every other one with the roles swapped, so the member at the lower
/// address (where a census enters a cycle of one type) holds `reply` in some pairs and
/// `parent` in the others: one finding either way.
@inline(never)
func symmetricCycles() {
  for index in 0..<200 {
    let first = Note()
    let second = Note()
    let (holder, held) = index % 2 == 0 ? (first, second) : (second, first)
    holder.reply = held
    held.parent = holder
    escape(first)
  }
}

final class ViewModel {
  var onChange: (() -> Void)?
  var count = 0

  @inline(never)
  func bind() {
    onChange = { self.count += 1 }
  }
}

/// A closure that captures self, stored in self.
@inline(never)
func closureSelf() {
  let model = ViewModel()
  model.bind()
  escape(model)
}

final class Link {
  var items: [AnyObject] = []
}

/// Three objects in a cycle through arrays: a.items[0] → b, b.items[0] → c, c.items[0] → a.
@inline(never)
func arrayCycle() {
  let a = Link()
  let b = Link()
  let c = Link()
  a.items.append(b)
  b.items.append(c)
  c.items.append(a)
  escape(a)
}

final class Parent {
  var children: [Child] = []
}

/// A plain integer equal to the address of `selfReferencing`'s Link: a root word that owns
/// nothing.
nonisolated(unsafe) var addressBits: UInt = 0

/// A Link whose array holds it 40,000 times, dropped, while a global integer keeps its
/// address: a strong count past 16 bits that its own array's references make up whole.
@inline(never)
func selfReferencing() {
  let link = Link()
  link.items = Array(repeating: link, count: 40_000)
  addressBits = UInt(bitPattern: ObjectIdentifier(link))
}

final class Child {
  var name = "child"
}

@inline(never)
func makeParent() -> Parent {
  let parent = Parent()
  for _ in 0..<3 { parent.children.append(Child()) }
  return parent
}

@inline(never)
func overRetain(_ parent: Parent) {
  _ = Unmanaged.passRetained(parent)
}

/// An over-retained Parent whose three Children it alone keeps.
@inline(never)
func overRetained() {
  overRetain(makeParent())
}

// MARK: - Not leaks

final class Slow {
  var child = Child()
}

/// A Slow waiting in a queue whose drain is an hour away: delayed, not leaked.
let slowQueue = DeallocQueue(label: "slow-queue", delay: .seconds(3600))

@inline(never)
func queued() {
  var slow: Slow? = Slow()
  slowQueue.releaseInBackground(&slow)
}

final class Kept {
  var value = 7
}

nonisolated(unsafe) var mallocBlock: UnsafeMutablePointer<UnsafeMutableRawPointer?>?

/// A Kept whose only reference is an Unmanaged retain stored in malloc'ed memory.
@inline(never)
func unmanagedInMalloc() {
  let block = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 4)
  block.initialize(repeating: nil, count: 4)
  block[2] = Unmanaged.passRetained(Kept()).toOpaque()
  mallocBlock = block
}

final class Bar {
  var value = 1
}

final class Baz {
  var value = 2
}

enum Slot {
  case none
  case bar(Bar)
  case baz(Baz)
}

final class SlotHolder {
  var first: Slot = .none
  var second: Slot = .none
}

nonisolated(unsafe) var slotHolder: SlotHolder?
nonisolated(unsafe) var globalSlot: Slot = .none

/// Objects whose only references are multi-payload enum payloads (tag in the spare bits),
/// in a class's fields and in a global.
@inline(never)
func multiPayloadEnum() {
  let holder = SlotHolder()
  holder.first = .bar(Bar())
  holder.second = .baz(Baz())
  slotHolder = holder
  globalSlot = .baz(Baz())
}

final class Local {
  var value = 3
}

nonisolated(unsafe) var blockedPipe: [Int32] = [0, 0]
let threadReady = DispatchSemaphore(value: 0)

@inline(never)
func readWith(_ local: Local) {
  var byte: UInt8 = 0
  threadReady.signal()
  _ = read(blockedPipe[0], &byte, 1)
  escape(local)
}

/// A thread blocked in read(2) whose local is a Local: not a leak.
@inline(never)
func blockedThread() {
  blockedPipe.withUnsafeMutableBufferPointer { _ = pipe($0.baseAddress!) }
  let thread = Thread { readWith(Local()) }
  thread.start()
  threadReady.wait()
  usleep(20_000)  // into read(2); the census reads /proc for it either way
}

/// A minimal thread (no Foundation): runs `body` on a pthread.
final class Thread {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }
  func start() {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(self).toOpaque()
    pthread_create(
      &thread, nil,
      { context in
        let me = Unmanaged<Thread>.fromOpaque(context!).takeRetainedValue()
        me.body()
        return nil
      }, context)
  }
}

final class Ticker {
  var ticks = 0
}

nonisolated(unsafe) var timer: DispatchSourceTimer?

/// A Ticker captured by a dispatch timer's handler: not a leak.
@inline(never)
func dispatchTimer() {
  let ticker = Ticker()
  let source = DispatchSource.makeTimerSource(queue: .global())
  source.setEventHandler { ticker.ticks += 1 }
  source.schedule(deadline: .now() + .seconds(3600))
  source.resume()
  timer = source
}

nonisolated(unsafe) var table: [String: Int] = [:]

/// A global Dictionary: its storage keeps a seed derived from its own address in `_seed`,
/// an Int that must not read as a reference to itself.
@inline(never)
func dictionary() {
  for index in 0..<8 { table["key \(index)"] = index }
}

final class Node {
  var next: Node?
  var payload = [UInt8](repeating: 1, count: 48)
}

nonisolated(unsafe) var bigHeap: [Node] = []

/// About 450,000 live objects (150,000 nodes, each with its array storage, in chains), for
/// the census's cost (`big json`, then the census_us it prints).
@inline(never)
func bigHeapScenario(_ count: Int) {
  bigHeap.reserveCapacity(count)
  var previous: Node?
  for index in 0..<count {
    let node = Node()
    if index % 3 != 0 { node.next = previous }
    previous = node
    bigHeap.append(node)
  }
}

final class Ring<T> {
  var next: AnyObject?
}

enum Tag<T> {}

/// `depth + 1` self-cycles, each of a type of its own (`Ring<Int>`, `Ring<Tag<Int>>`, ...):
/// more findings than a census record writes in full.
@inline(never)
func ringShapes<T>(_ depth: Int, _ type: T.Type) {
  let ring = Ring<T>()
  ring.next = ring
  escape(ring)
  if depth > 0 { ringShapes(depth - 1, Tag<T>.self) }
}

/// Forks from a second thread while the main thread runs censuses; each child runs a census
/// of its own and exits 0 when it worked. Prints `FORKS ok N hung N failed N` (a child that
/// has not exited after 10 s is killed and counted as hung).
@inline(never)
func forkDuringCensus() {
  let done = DispatchSemaphore(value: 0)
  nonisolated(unsafe) var ok = 0
  nonisolated(unsafe) var hung = 0
  nonisolated(unsafe) var failed = 0
  Thread {
    for _ in 0..<20 {
      let pid = fork()
      if pid == 0 {
        guard let json = cholders_census_json(nil, "child", nil) else { _exit(3) }
        _exit(strstr(json, "\"error\"") == nil ? 0 : 4)
      }
      var status: Int32 = 0
      var waited = 0
      while waitpid(pid, &status, WNOHANG) == 0 {
        if waited >= 10_000 {
          kill(pid, SIGKILL)
          waitpid(pid, &status, 0)
          break
        }
        usleep(1_000)
        waited += 1
      }
      if waited >= 10_000 {
        hung += 1
      } else if status == 0 {
        ok += 1
      } else {
        failed += 1
      }
    }
    done.signal()
  }.start()
  for round in 0..<20 {
    if let json = cholders_census_json(nil, "round \(round)", nil) { cholders_free(json) }
  }
  done.wait()
  print("FORKS ok \(ok) hung \(hung) failed \(failed)")
}

final class CacheEntry {
  var value = 0
}

nonisolated(unsafe) var growingCache: [CacheEntry] = []

/// A cache that only grows: four iterations add ten entries each, with a checkpoint after
/// each ("iteration"). Reachable all along: no leak, but growth across checkpoints.
@inline(never)
func growingCacheScenario() {
  for _ in 0..<4 {
    for _ in 0..<10 { growingCache.append(CacheEntry()) }
    DeallocTrace.checkpoint("iteration")
  }
}

/// The recorder's question before a holder scan, "is this object waiting in a queue", asked
/// 1,000 times between checkpoints ("lookup"): the answer must leave nothing behind.
@inline(never)
func pendingLookupScenario() {
  let queue = DeallocQueue(label: "probe.lookup", delay: .seconds(3600))
  var local: Local? = Local()
  queue.releaseInBackground(&local)
  for _ in 0..<4 {
    for address in 0..<UInt(1_000) { _ = QueueTracing.isPendingInAnyQueue(address: address) }
    DeallocTrace.checkpoint("lookup")
  }
  queue.drain()
}

/// The key that hides the register-held object's address while it travels.
let registerKey: UInt = 0x3c3c_3c3c_3c3c_3c3c

/// A retained Local whose address comes back hidden: the only reference is the retain.
@inline(never)
func hiddenRetainedLocal() -> UInt {
  UInt(bitPattern: Unmanaged.passRetained(Local()).toOpaque()) ^ registerKey
}

/// A thread blocked in read(2) whose only reference to a Local is in a callee-saved
/// register (CensusProbeSupport): the census sees it only through the signal that makes the
/// kernel save the thread's registers on its stack.
@inline(never)
func registerHeldLocal() {
  blockedPipe.withUnsafeMutableBufferPointer { _ = pipe($0.baseAddress!) }
  let fd = blockedPipe[0]
  let thread = Thread {
    let hidden = hiddenRetainedLocal()
    census_probe_scrub_stack()
    threadReady.signal()
    _ = census_probe_read_holding_in_register(hidden, registerKey, fd)
  }
  thread.start()
  threadReady.wait()
  // Into read(2): the census below reads /proc for its stack pointer either way.
  usleep(20_000)
}

/// 10,000 objects alive at once, then freed: with allocation stacks on, each one's entry
/// must leave the side table with it (made and freed one at a time, each would reuse the
/// last one's address, and so its entry, which hides a missing removal).
@inline(never)
func churn() {
  let batch = (0..<10_000).map { _ in Payment() }
  escape(batch as AnyObject)
}

// MARK: - Main

var arguments = Array(CommandLine.arguments.dropFirst())
var printJSON = false
var checkpointLabel: String?
if let index = arguments.firstIndex(of: "json") {
  printJSON = true
  arguments.remove(at: index)
}
if let index = arguments.firstIndex(of: "checkpoint"), index + 1 < arguments.count {
  checkpointLabel = arguments[index + 1]
  arguments.removeSubrange(index...index + 1)
}
for scenario in arguments {
  switch scenario {
  case "cycle": plainCycle()
  case "deep-cycle": deepCycle(40)
  case "closure-self": closureSelf()
  case "array-cycle": arrayCycle()
  case "self-referencing": selfReferencing()
  case "over-retained": overRetained()
  case "queued": queued()
  case "unmanaged-malloc": unmanagedInMalloc()
  case "enum": multiPayloadEnum()
  case "blocked-thread": blockedThread()
  case "timer": dispatchTimer()
  case "dictionary": dictionary()
  case "big": bigHeapScenario(225_000)
  case "many-cycles": for _ in 0..<5_000 { plainCycle() }
  case "symmetric-cycles": symmetricCycles()
  case "many-shapes": ringShapes(59, Int.self)
  case "fork-census": forkDuringCensus()
  case "growth": growingCacheScenario()
  case "pending-lookup": pendingLookupScenario()
  case "register-held": registerHeldLocal()
  case "churn": churn()
  case "clean": break
  default:
    let message = "CensusProbe: unknown scenario \(scenario)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
  }
}
if printJSON {
  var text: UnsafeMutablePointer<CChar>?
  if let json = cholders_census_json(nil, "probe", &text) {
    print("CENSUS {\(String(cString: json))}")
    cholders_free(json)
  }
  var stats = cholders_census_stats()
  cholders_last_census_stats(&stats)
  print(
    "STATS objects \(stats.objects) edges \(stats.edges) unreachable \(stats.unreachable)"
      + " extra_bytes \(stats.extra_bytes) total_us \(stats.total_us)")
  cholders_free(text)
}
if let checkpointLabel {
  DeallocTrace.checkpoint(checkpointLabel)
}
