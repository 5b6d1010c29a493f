import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The shapes of generated log the report is measured on.
///
/// Why several: the report's cost depends on what the log holds, not only on its size. A log
/// where every object is freed exercises the reader; a log with leaks and a stalled queue
/// exercises what the analyzer does per unreleased object at a session's end, which is where
/// a per-object cost once hid (issue 11).
enum LogShape: CustomStringConvertible {
  /// Every object released and freed (a few late deallocs), checks of objects still queued:
  /// no true leaks.
  case clean
  /// A run with leaks: 30 % of the objects stuck behind a stalled queue, 5 % leaked
  /// survivors, a check per 20 objects (on the leaked ones), 13-frame stacks from 256 call
  /// sites, and no `end` record (the process was killed).
  case leakHeavy
  /// Objects enqueued and never released, each at its own address, in a session that ended:
  /// the per-object state the analyzer keeps until the end.
  case neverReleased

  var description: String {
    switch self {
    case .clean: return "clean"
    case .leakHeavy: return "leak-heavy"
    case .neverReleased: return "never-released"
    }
  }

  /// Writes the log of `objects` objects at `path`; returns its size in bytes.
  func write(objects: Int, at path: String) -> Int {
    guard let file = fopen(path, "w") else { fatalError("cannot create \(path)") }
    defer { fclose(file) }
    let log = GeneratedLogFile(file)
    switch self {
    case .clean: writeClean(objects: objects, log)
    case .leakHeavy: writeLeakHeavy(objects: objects, log)
    case .neverReleased: writeNeverReleased(objects: objects, log)
    }
    log.flush()
    return log.total
  }
}

/// A generated log's lines, buffered: the hot kinds (`enqueue`, `release`, `drain`,
/// `dealloc`, `check`) by the recorder's own line writer (`JSONLine`), so that the report is
/// measured on exactly what the recorder writes; the rare kinds (session, threads, stacks,
/// marks) as literal text.
private final class GeneratedLogFile {
  private let file: UnsafeMutablePointer<FILE>
  private(set) var line = JSONLine()
  private(set) var total = 0

  init(_ file: UnsafeMutablePointer<FILE>) {
    self.file = file
    line.bytes.reserveCapacity(1 << 21)
  }

  /// A literal line.
  func emit(_ text: String) {
    line.bytes.append(contentsOf: text.utf8)
    line.bytes.append(UInt8(ascii: "\n"))
    flushIfFull()
  }

  /// A line written by the recorder's writer.
  func record(_ write: (inout JSONLine) -> Void) {
    write(&line)
    flushIfFull()
  }

  func enqueue(
    time: Int64, id: Int, address: UInt64, type: String, queue: String, depth: Int, stack: Int
  ) {
    record {
      $0.enqueue(
        time: UInt64(time), id: UInt64(id), hiddenAddress: HiddenAddress.hide(UInt(address)),
        type: type, queue: queue, threadID: 4242, depth: depth, stack: stack, retainCount: 1,
        elementCount: nil)
    }
  }

  func release(time: Int64, id: Int, survivorRetainCount: Int?) {
    record {
      $0.release(
        time: UInt64(time), id: UInt64(id), threadID: 4250,
        survivorRetainCount: survivorRetainCount)
    }
  }

  func drain(time: Int64, queue: String, count: Int) {
    record {
      $0.drain(time: UInt64(time), queue: queue, count: count, threadID: 4250, reason: .timer)
    }
  }

  func check(time: Int64, address: UInt64, type: String, label: String, id: Int) {
    record {
      $0.check(
        time: UInt64(time), hiddenAddress: HiddenAddress.hide(UInt(address)), type: type,
        alive: true, label: label, id: UInt64(id), threadID: 4242)
    }
  }

  func flush() {
    total += line.bytes.count
    _ = line.bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
    line.bytes.removeAll(keepingCapacity: true)
  }

  private func flushIfFull() {
    if line.bytes.count >= 1 << 20 { flush() }
  }
}

/// A generated log of `objects` objects in a fresh temporary directory: its path and size.
func generatedLog(_ shape: LogShape, objects: Int) -> (path: String, bytes: Int) {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("dealloctrace-bench-\(getpid())-\(shape)-\(objects)")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  let path = directory.appendingPathComponent("generated.jsonl").path
  return (path, shape.write(objects: objects, at: path))
}

/// Removes what `generatedLog` made.
func removeGeneratedLog(_ path: String) {
  try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
}

/// Writes a log shaped like a traced program's: one session, a few threads and stacks,
/// `objects` enqueues released in batches of 64 by timed drains, a few survivors (some
/// deallocated later), checks and marks. Returns its size in bytes.
private func writeClean(objects: Int, _ log: GeneratedLogFile) {
  log.emit(
    #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Feed","wall":"2026-11-29T18:03:07.123456Z","delay_ms":100,"frames":32}"#
  )
  log.emit(#"{"ev":"thread","tid":4242,"name":"main"}"#)
  log.emit(#"{"ev":"thread","tid":4250,"name":"dealloc.shared"}"#)
  let types = ["Feed.NodeCell", "Feed.DataController", "Feed.ImageNode", "Feed.TextNode"]
  for stack in 1...8 {
    log.emit(
      #"{"ev":"stack","id":\#(stack),"frames":[{"ip":"0x55d0c0a10010","mod":"/app/Feed","off":"0x10010","sym":"DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()"},{"ip":"0x55d0c0a1b2\#(stack)c3","mod":"/app/Feed","off":"0x1b2\#(stack)c3","sym":"Feed.FeedScreen.close\#(stack)() -> ()"},{"ip":"0x7f1234529d90","mod":"/usr/lib/x86_64-linux-gnu/libc.so.6","off":"0x29d90"}]}"#
    )
  }
  let batch = 64
  var t: Int64 = 1000
  var id = 1
  var survivors: [Int] = []
  while id <= objects {
    let first = id
    let last = min(objects, id + batch - 1)
    for object in first...last {
      t += 1_537
      log.enqueue(
        time: t, id: object, address: 0x6000_00c0_0000 + UInt64(object % 50_000) * 64,
        type: types[object % types.count], queue: "shared", depth: object - first + 1,
        stack: object % 8 + 1)
    }
    if first % 4096 == 1 {
      log.emit(#"{"ev":"mark","t":\#(t),"label":"batch \#(first)","tid":4242}"#)
      log.check(
        time: t + 1, address: 0x6000_00c0_0000 + UInt64(first % 50_000) * 64,
        type: types[first % types.count], label: "FeedTests.testBatch", id: first)
    }
    t += 100_000_000 / 64
    log.drain(time: t, queue: "shared", count: last - first + 1)
    for object in first...last {
      t += 211
      let survives = object % 10_000 == 0
      log.release(time: t, id: object, survivorRetainCount: survives ? 2 : nil)
      if survives { survivors.append(object) }
    }
    if survivors.count > 1, let late = survivors.first {
      survivors.removeFirst()
      log.record { $0.dealloc(time: UInt64(t + 5), id: UInt64(late)) }
    }
    id = last + 1
  }
  log.emit(#"{"ev":"end","t":\#(t + 1000),"why":"exit","pending":0,"lost":0}"#)
}

/// The leak-heavy shape (see ``LogShape/leakHeavy``).
private func writeLeakHeavy(objects: Int, _ log: GeneratedLogFile) {
  log.emit(
    #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Feed","wall":"2026-11-29T18:03:07.123456Z","delay_ms":100,"frames":32}"#
  )
  log.emit(#"{"ev":"thread","tid":4242,"name":"main"}"#)
  log.emit(#"{"ev":"thread","tid":4250,"name":"dealloc.shared"}"#)
  let stacks = 256
  for stack in 1...stacks {
    log.emit(#"{"ev":"stack","id":\#(stack),"frames":[\#(leakHeavyFrames(stack))]}"#)
  }
  let types = (0..<24).map { "Feed.Node\($0)" }
  let batch = 64
  var t: Int64 = 1000
  var id = 1
  var checks: [(id: Int, address: UInt64, type: String)] = []
  while id <= objects {
    let first = id
    let last = min(objects, id + batch - 1)
    var drained: [Int] = []
    for object in first...last {
      t += 1_537
      let address = 0x6000_00c0_0000 + UInt64(object % 200_000) * 64
      let type = types[(object * 7) % types.count]
      let stalled = object % 10 < 3
      log.enqueue(
        time: t, id: object, address: address, type: type, queue: stalled ? "stalled" : "shared",
        depth: object - first + 1, stack: (object * 31) % stacks + 1)
      if !stalled { drained.append(object) }
      if object % 20 == 3 { checks.append((object, address, type)) }
    }
    t += 100_000_000 / 64
    log.drain(time: t, queue: "shared", count: drained.count)
    for object in drained {
      t += 211
      log.release(time: t, id: object, survivorRetainCount: object % 20 == 3 ? 2 : nil)
    }
    for check in checks {
      t += 97
      log.check(
        time: t, address: check.address, type: check.type, label: "FeedTests.testClose",
        id: check.id)
    }
    checks.removeAll(keepingCapacity: true)
    id = last + 1
  }
}

/// A 13-frame enqueue stack of call site `site`: five frames of the queue, the tracer and the
/// runtime, then the program's (varied per site, so that sites make distinct signatures),
/// then libc.
private func leakHeavyFrames(_ site: Int) -> String {
  let module = #""mod":"/app/Feed""#
  var frames: [String] = [
    #"{"ip":"0x55d0c0a10010",\#(module),"off":"0x10010","sym":"DeallocQueue.DeallocQueue.(enqueue in _5968D6D40D2598B75810DF95E5B8D886)<A where A: AnyObject>(_: inout Swift.Optional<A>, hooked: Swift.Bool) -> ()"}"#,
    #"{"ip":"0x55d0c0a10210",\#(module),"off":"0x10210","sym":"closure #1 () -> () in DeallocTrace.Tracer.recordEnqueue(AnyObject, queue: Swift.String) -> ()"}"#,
    #"{"ip":"0x7f12345a0010","mod":"/usr/lib/swift/linux/libswiftCore.so","off":"0x3a0010","sym":"swift_retain"}"#,
    #"{"ip":"0x55d0c0a10410",\#(module),"off":"0x10410","sym":"generic specialization <Feed.Node> of DeallocQueue.DeallocQueue.releaseInBackground<A where A: AnyObject>(inout Swift.Optional<A>) -> ()"}"#,
    #"{"ip":"0x55d0c0a10610",\#(module),"off":"0x10610","sym":"DeallocQueue.performBackgroundDeallocation<A where A: AnyObject>(inout Swift.Optional<A>) -> ()"}"#,
  ]
  for depth in 0..<6 {
    let ip = String(0x55d0_c0b0_0000 + UInt64(site) * 0x1000 + UInt64(depth) * 0x40, radix: 16)
    let name =
      "Feed.Screen\(site % (depth + 3) + depth * 10).step\(depth)(animated: Swift.Bool) -> ()"
    frames.append(#"{"ip":"0x\#(ip)",\#(module),"off":"0x\#(ip.suffix(6))","sym":"\#(name)"}"#)
  }
  frames.append(
    #"{"ip":"0x7f1234529d90","mod":"/usr/lib/x86_64-linux-gnu/libc.so.6","off":"0x29d90","sym":"__libc_start_call_main"}"#
  )
  frames.append(
    #"{"ip":"0x7f1234529e40","mod":"/usr/lib/x86_64-linux-gnu/libc.so.6","off":"0x29e40","sym":"__libc_start_main"}"#
  )
  return frames.joined(separator: ",")
}

/// The never-released shape (see ``LogShape/neverReleased``).
private func writeNeverReleased(objects: Int, _ log: GeneratedLogFile) {
  log.emit(
    #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Feed","wall":"2026-11-29T18:03:07.123456Z","delay_ms":100,"frames":32}"#
  )
  log.emit(#"{"ev":"thread","tid":4242,"name":"main"}"#)
  for stack in 1...8 {
    log.emit(#"{"ev":"stack","id":\#(stack),"frames":[\#(leakHeavyFrames(stack))]}"#)
  }
  let types = (0..<24).map { "Feed.Node\($0)" }
  var t: Int64 = 1000
  for object in 1...objects {
    t += 1_537
    log.enqueue(
      time: t, id: object, address: 0x6000_0000_0000 + UInt64(object) * 64,
      type: types[object % types.count], queue: "stalled", depth: object, stack: object % 8 + 1)
  }
  log.emit(#"{"ev":"end","t":\#(t + 1000),"why":"exit","pending":\#(objects),"lost":0}"#)
}
