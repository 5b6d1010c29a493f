// HolderProbe scenarios about the process around the scan: a registry span it does not
// list, a plugin unloaded under its objects, forks in the middle of a scan, a module path
// that is no valid UTF-8, and more mappings and threads than the scanner's first tables.

import CHolders
import Dispatch
import Foundation
import Synchronization

nonisolated(unsafe) var spreadKeep: [Child] = []

/// Objects in a span the registry does not list (run with CHOLDERS_TEST_SPANS_UNLISTED=1,
/// which lists only the first span): 20,000 objects made on a thread of their own, whose
/// first malloc attaches it to an arena of its own (a heap mapping in another 64 MiB span
/// than the main thread's). The target is the last of them; prints the live count.
@inline(never)
func spread() -> UInt {
  var thread = pthread_t()
  let created = pthread_create(
    &thread, nil,
    { _ in
      spreadKeep = (0..<20_000).map { _ in Child() }
      return nil
    }, nil)
  precondition(created == 0, "pthread_create failed")
  pthread_join(thread, nil)
  print("LIVE \(cholders_live_count())")
  return address(of: spreadKeep[19_999]) ^ scramble
}

nonisolated(unsafe) var pluginKeepPlain: AnyObject?
nonisolated(unsafe) var pluginKeepGeneric: AnyObject?

/// A plugin's objects that outlive its image: the shared library at `HOLDERPROBE_PLUGIN`
/// (built by the test) makes two objects that hold the target (one of a plain class, one of
/// a generic class instantiated with the plugin's own struct, whose metadata the runtime
/// made in its own memory), and is dlclose'd while globals here keep them. Prints
/// `UNLOADED 1` once no mapping of the plugin's file is left.
@inline(never)
func unloadedImage() -> UInt {
  guard let path = ProcessInfo.processInfo.environment["HOLDERPROBE_PLUGIN"],
    let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL),
    let make = dlsym(handle, "plugin_make_holders")
  else {
    print("PLUGIN \(String(cString: dlerror()))")
    return 0
  }
  typealias MakeHolders =
    @convention(c) (
      UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Void
  let child = Child()
  var made = [UnsafeMutableRawPointer?](repeating: nil, count: 2)
  unsafeBitCast(make, to: MakeHolders.self)(Unmanaged.passUnretained(child).toOpaque(), &made)
  pluginKeepPlain = made[0].map { Unmanaged<AnyObject>.fromOpaque($0).takeRetainedValue() }
  pluginKeepGeneric = made[1].map { Unmanaged<AnyObject>.fromOpaque($0).takeRetainedValue() }
  let result = address(of: child) ^ scramble
  dlclose(handle)
  let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? path
  print("UNLOADED \(maps.contains(path) ? 0 : 1)")
  return result
}

/// The scanning thread of `forkWhileScanning`: 1 while inside a scan, the scans finished,
/// and whether to stop.
final class ForkScanner: Sendable {
  let scanning = Atomic<Int>(0)
  let finished = Atomic<Int>(0)
  let stop = Atomic<Int>(0)
}
let forkScanner = ForkScanner()
nonisolated(unsafe) var forkTarget: UInt = 0

/// One scan of the global chain's child from the calling thread (its stack holds the
/// target's address, out of the scan's sight). Returns whether it named `globalHolder`.
func scanChainOnce() -> Bool {
  withUnsafeTemporaryAllocation(of: UInt.self, capacity: 1) { targets in
    targets[0] = forkTarget ^ scramble
    guard let json = scanJSON(targets.baseAddress, 1, depth: 6, paths: 8) else { return false }
    return json.contains("HolderProbe.globalHolder")
  }
}

/// Forks `count` times while another thread scans in a loop, each fork while that thread is
/// inside a scan (so, very likely, while it holds the scan lock). Each forked child's first
/// scan must finish: an alarm kills a child that hangs (exit by SIGALRM); a child whose scan
/// finished exits 0, one whose scan failed 3. Prints `FORKS count=… completed=… hung=…`.
func forkWhileScanning(_ count: Int) {
  forkTarget = chain()
  var thread = pthread_t()
  let created = pthread_create(
    &thread, nil,
    { _ in
      while forkScanner.stop.load(ordering: .acquiring) == 0 {
        forkScanner.scanning.store(1, ordering: .releasing)
        _ = scanChainOnce()
        forkScanner.scanning.store(0, ordering: .releasing)
        forkScanner.finished.add(1, ordering: .releasing)
      }
      return nil
    }, nil)
  precondition(created == 0, "pthread_create failed")
  var children: [pid_t] = []
  children.reserveCapacity(count)
  var completed = 0
  var hung = 0
  var failed = 0
  for _ in 0..<count {
    // Wait for the next scan to begin (bounded: a scanner that never scans fails the run).
    let seen = forkScanner.finished.load(ordering: .acquiring)
    var spins = 0
    while forkScanner.finished.load(ordering: .acquiring) == seen
      || forkScanner.scanning.load(ordering: .acquiring) == 0
    {
      spins += 1
      precondition(spins < 100_000_000, "the scanning thread made no progress")
      sched_yield()
    }
    let pid = fork()
    if pid == 0 {
      alarm(20)
      _exit(scanChainOnce() ? 0 : 3)
    }
    precondition(pid > 0, "fork failed")
    children.append(pid)
  }
  forkScanner.stop.store(1, ordering: .releasing)
  pthread_join(thread, nil)
  // Waited for together, so that hung children cost one alarm's time, not one each.
  for pid in children {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    if signal == 0 && (status >> 8) & 0xff == 0 {
      completed += 1
    } else if signal == SIGALRM {
      hung += 1
    } else {
      failed += 1
    }
  }
  print("FORKS count=\(count) completed=\(completed) hung=\(hung) failed=\(failed)")
}

/// The bytes of a directory name that is no valid UTF-8 at the escaper's edges: U+10FFFF
/// (the last code point), U+110000 (one past it), a surrogate, an overlong form, a byte that
/// starts nothing, and a sequence cut short by the `/` after it.
let invalidUTF8Name: [UInt8] = [
  0x78, 0xF4, 0x8F, 0xBF, 0xBF, 0x79, 0xF4, 0x90, 0x80, 0x80, 0x7A, 0xED, 0xA0, 0x80, 0x77,
  0xC0, 0xAF, 0x76, 0xFF, 0x75, 0xE2, 0x82,
]

/// Copies this executable into a directory named `invalidUTF8Name` inside
/// `HOLDERPROBE_DIR` and runs the copy's `scenario` (`chain`: the module path in the scan's
/// JSON goes through the escaper; `answer-edges`: the answer's raw module bytes). Returns
/// only on failure.
func runFromInvalidUTF8Directory(_ scenario: String) {
  guard let parent = ProcessInfo.processInfo.environment["HOLDERPROBE_DIR"] else {
    print("no HOLDERPROBE_DIR")
    return
  }
  let directory = Array(parent.utf8) + [0x2F] + invalidUTF8Name
  let copy = directory + Array("/HolderProbe".utf8)
  func cString(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }
  guard mkdir(cString(directory), 0o700) == 0 else {
    print("mkdir failed")
    return
  }
  let source = open("/proc/self/exe", O_RDONLY)
  let target = open(cString(copy), O_WRONLY | O_CREAT | O_TRUNC, 0o700)
  guard source >= 0, target >= 0 else {
    print("open failed")
    return
  }
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = read(source, &buffer, buffer.count)
    if count <= 0 { break }
    guard write(target, buffer, count) == count else {
      print("write failed")
      return
    }
  }
  close(source)
  close(target)
  var arguments: [UnsafeMutablePointer<CChar>?] = [strdup("HolderProbe"), strdup(scenario), nil]
  execv(cString(copy), &arguments)
  print("execv failed")
}

nonisolated(unsafe) var regionsKeep: Child?

/// More writable mappings than the scan's region list first holds (8,192): `count`
/// one-page read-write mappings, each between read-only pages so that none merge (no guard
/// page below them either: that is how thread stacks are told), and the
/// target's address in the last of them (and in a global). Both words are holders.
@inline(never)
func manyRegions(_ count: Int) -> UInt {
  let page = Int(sysconf(Int32(_SC_PAGESIZE)))
  guard
    let base = mmap(nil, 2 * count * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
    base != MAP_FAILED
  else {
    print("mmap failed")
    return 0
  }
  for index in 0..<count {
    precondition(mprotect(base + 2 * index * page, page, PROT_READ | PROT_WRITE) == 0)
  }
  let child = Child()
  regionsKeep = child
  // An owning word (a retained reference), so that the strong count does not rule it out.
  (base + 2 * (count - 1) * page).storeBytes(
    of: UInt(bitPattern: Unmanaged.passRetained(child).toOpaque()), as: UInt.self)
  return address(of: child) ^ scramble
}

/// The parked threads of `manyThreads`: how many are parked, and the pipe they block on
/// (closing its write end lets them all go).
final class ThreadPark: Sendable {
  let parked = Atomic<Int>(0)
  let readEnd = Atomic<Int32>(-1)
}
let threadPark = ThreadPark()
nonisolated(unsafe) var threadsTarget: UInt = 0
nonisolated(unsafe) var threadsHolder: Int32 = 0

/// Parks the calling thread in a system call (a read of the park's pipe) until the pipe's
/// write end closes, holding `object` in this frame's stack slot (inout takes its address).
@inline(never)
func parkInSystemCall(_ object: inout Child?) {
  threadPark.parked.add(1, ordering: .releasing)
  var byte: UInt8 = 0
  while read(threadPark.readEnd.load(ordering: .acquiring), &byte, 1) < 0 && errno == EINTR {}
  object?.value += 1
}

/// More threads than the scanner's first thread table held (1,024): `count` threads with
/// small stacks, parked in a system call; the last one holds the target on its stack and
/// prints its id (`TID`). Its stack root must carry that id.
func manyThreads(_ count: Int) {
  // Leaked on purpose: only the last thread's stack holds it.
  threadsTarget = UInt(bitPattern: Unmanaged.passRetained(Child()).toOpaque()) ^ scramble
  var ends: [Int32] = [-1, -1]
  precondition(pipe(&ends) == 0, "pipe failed")
  threadPark.readEnd.store(ends[0], ordering: .releasing)
  var attributes = pthread_attr_t()
  pthread_attr_init(&attributes)
  pthread_attr_setstacksize(&attributes, 64 << 10)
  var threads: [pthread_t] = []
  for index in 0..<count {
    var thread = pthread_t()
    let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { last in
      var object: Child? = nil
      if last != nil {
        object = Unmanaged<Child>.fromOpaque(
          UnsafeRawPointer(bitPattern: threadsTarget ^ scramble)!
        )
        .takeUnretainedValue()
        threadsHolder = Int32(cholders_thread_id())
      }
      parkInSystemCall(&object)
      return nil
    }
    let last = index == count - 1 ? UnsafeMutableRawPointer(bitPattern: 1) : nil
    precondition(pthread_create(&thread, &attributes, body, last) == 0, "pthread_create failed")
    threads.append(thread)
  }
  var spins = 0
  while threadPark.parked.load(ordering: .acquiring) < count {
    spins += 1
    precondition(spins < 100_000_000, "the threads did not park")
    sched_yield()
  }
  print("TID \(threadsHolder)")
  scan(threadsTarget, paths: 2)
  close(ends[1])
  for thread in threads { pthread_join(thread, nil) }
}
