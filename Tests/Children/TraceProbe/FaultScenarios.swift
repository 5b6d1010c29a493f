import CUnwind
import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Records until the tracer stops on a write error, then keeps using the queue.
///
/// With `TRACE_PROBE_FILE_LIMIT=BYTES` the probe itself caps the log's growth after the
/// first round (`RLIMIT_FSIZE`; `SIGXFSZ` keeps its default, fatal disposition: the
/// recorder's write must fail with `EFBIG` without the signal reaching the probe);
/// without it the test gives the log a small file system that fills up (`ENOSPC`).
func runFillingLog() {
  var rounds = 0
  let limit = ProcessInfo.processInfo.environment["TRACE_PROBE_FILE_LIMIT"].flatMap { Int($0) }
  while DeallocTrace.isEnabled && rounds < 5_000 {
    for _ in 0..<50 { handOverFeedController(levels: 1) }
    DeallocTrace.mark("fill \(rounds)")
    DeallocQueue.shared.drain()
    DeallocTrace.flush()
    if rounds == 0, let limit, let path = DeallocTrace.logPath {
      var status = stat()
      stat(path, &status)
      var cap = rlimit(
        rlim_cur: rlim_t(Int(status.st_size) + limit), rlim_max: rlim_t(Int(status.st_size) + limit)
      )
      setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &cap)
      // The default, fatal disposition, whatever the test runner passed down (an ignored
      // signal stays ignored across exec and would hide a recorder that raises it).
      signal(SIGXFSZ, SIG_DFL)
    }
    rounds += 1
  }
  // The queue keeps working untraced.
  for _ in 0..<50 { handOverFeedController(levels: 1) }
  DeallocQueue.shared.drain()
  print("stopped after \(rounds) rounds, tracing \(DeallocTrace.isEnabled ? "on" : "off")")
}

/// Prints the log descriptor's open flags, then lists the descriptors an exec'd child has.
/// Written with `write(2)`, unbuffered, so the child's lines come after the probe's own.
func runDescriptorCheck() {
  handOverFeedController(levels: 1)
  guard let path = DeallocTrace.logPath else {
    say("not tracing")
    return
  }
  var logDescriptor: Int32 = -1
  if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
    for entry in entries {
      let link = "/proc/self/fd/" + entry
      if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == path {
        logDescriptor = Int32(entry) ?? -1
      }
    }
  }
  let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(logDescriptor)", encoding: .utf8)
  let flags =
    info?.split(separator: "\n").first { $0.hasPrefix("flags:") }?
    .split(separator: "\t").last.map(String.init) ?? "?"
  say("log fd \(logDescriptor) flags \(flags)")
  say("child fds:")
  // posix_spawn closes nothing itself: only O_CLOEXEC keeps the log out of the child.
  var child: pid_t = 0
  let words: [String] = ["ls", "-l", "/proc/self/fd"]
  let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
  defer {
    for argument in arguments { free(argument) }
  }
  let status = posix_spawn(&child, "/bin/ls", nil, nil, arguments, environ)
  if status == 0 {
    var exitStatus: Int32 = 0
    waitpid(child, &exitStatus, 0)
  } else {
    say("spawn failed: \(status)")
  }
}

private func say(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Reports which library a traced process's `backtrace` and `_Unwind_Backtrace` come from,
/// and that both still unwind this stack. libunwind, linked, would provide both.
func runUnwinderCheck() {
  handOverFeedController(levels: 1)  // a backtrace first: libunwind is loaded by now
  DeallocQueue.shared.drain()
  typealias Backtrace =
    @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32)
    -> Int32
  typealias TraceCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
  typealias UnwindBacktrace = @convention(c) (TraceCallback, UnsafeMutableRawPointer?) -> Int32
  if let backtrace = dlsym(nil, "backtrace") {
    var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
    let count = unsafeBitCast(backtrace, to: Backtrace.self)(&frames, 64)
    print("backtrace from \(library(of: backtrace)) frames \(count)")
  }
  if let unwind = dlsym(nil, "_Unwind_Backtrace") {
    var count = 0
    _ = withUnsafeMutablePointer(to: &count) { counter in
      unsafeBitCast(unwind, to: UnwindBacktrace.self)(
        { _, counter in
          counter!.assumingMemoryBound(to: Int.self).pointee += 1
          return 0  // _URC_NO_REASON: keep going
        }, counter)
    }
    print("_Unwind_Backtrace from \(library(of: unwind)) frames \(count)")
  }
}

private func library(of address: UnsafeMutableRawPointer) -> String {
  var module = [CChar](repeating: 0, count: 4096)
  var symbol = [CChar](repeating: 0, count: 256)
  var base: UInt = 0
  let found = cunwind_describe_address(
    UInt(bitPattern: address), &module, module.count, &base, &symbol, symbol.count)
  guard found != 0 else { return "?" }
  let path = String(
    decoding: module.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  return URL(fileURLWithPath: path).lastPathComponent
}
