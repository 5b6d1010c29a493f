// A libFuzzer target for the analysis half: the log reader, the analyzer, the renderers and
// the CI gate, fed arbitrary bytes. `scripts/fuzz` compiles it together with the
// DeallocLog and DeallocAnalysis sources into one module (so it reaches internal API too) with
// `-sanitize=fuzzer,address`.
//
// The gate's suppressions come from the same input: every line that is not a JSON record
// is a suppression line (the reader skips it as malformed), so the seeds that join a log
// and a suppressions file exercise the gate with suppressions that match. The gate's
// verdict and every output (text, JSON, Markdown, JUnit, GitHub) must then hold
// `GateInvariants`; a violation is a crash, hence a regression input.
//
// The reader takes its input from a path, as the CLI does; each input is written to one
// unlinked temporary file (in /dev/shm, memory-backed) that the reader opens through
// `/proc/self/fd/N`, so the fuzzer exercises the same `read(2)` path as real logs.

#if canImport(Glibc)
  import Glibc
#endif

/// The unlinked file that holds the current input. (`memfd_create` is not imported into
/// Swift by Glibc; an unlinked file in /dev/shm is the same thing.)
private let inputFile: (descriptor: Int32, path: String) = {
  let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
  var template = Array("\(directory)/dealloctrace-fuzz-XXXXXX".utf8CString)
  let descriptor = mkstemp(&template)
  guard descriptor >= 0 else {
    fputs(
      "fuzz: cannot create a file in \(directory): \(String(cString: strerror(errno)))\n", stderr)
    exit(2)
  }
  unlink(template)
  return (descriptor, "/proc/self/fd/\(descriptor)")
}()

private let renderers: [any ReportRenderer] = [
  TextRenderer(), JSONRenderer(), MarkdownRenderer(), HTMLRenderer(),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let (descriptor, path) = inputFile
  guard ftruncate(descriptor, 0) == 0 else { return 0 }
  if let data, size > 0 {
    var offset = 0
    while offset < size {
      let written = pwrite(descriptor, data + offset, size - offset, off_t(offset))
      guard written > 0 else { return 0 }
      offset += written
    }
  }
  var reader = LogReader()
  var analyzer = Analyzer()
  do {
    try reader.read(LogInput(path: path), into: &analyzer)
  } catch {
    // Unusable input must come out as a one-line message naming the input.
    let message = error.description
    precondition(!message.isEmpty && !message.contains("\n"), "bad error message: \(message)")
  }
  let report = analyzer.finish(inputs: [path])
  for renderer in renderers {
    _ = renderer.render(report)
  }
  let text = data.map {
    String(decoding: UnsafeBufferPointer(start: $0, count: size), as: UTF8.self)
  }
  fuzzGate(report, text: text ?? "", variant: size % 3)
  return 0
}

/// Judges `report` with the suppressions written in `text` and checks every invariant;
/// `variant` picks the thresholds (the defaults, all unlimited, or all 1).
private func fuzzGate(_ report: Report, text: String, variant: Int) {
  let (suppressions, problems) = GateInvariants.suppressions(in: text)
  precondition(problems.isEmpty, "suppressions: \(problems)")
  let patterns = suppressions.suppressions.prefix(8).map(\.glob.pattern)
  let globProblems = GateInvariants.globViolations(Array(patterns))
  precondition(globProblems.isEmpty, "globs: \(globProblems)")
  let thresholds: GateThresholds
  switch variant {
  case 0: thresholds = GateThresholds()
  case 1: thresholds = GateThresholds(maxLeaked: nil, maxStuck: nil, maxTrueLeaks: nil)
  default:
    thresholds = GateThresholds(maxLeaked: 1, maxStuck: 1, maxTrueLeaks: 1, maxNeverReleased: 1)
  }
  let result = Gate(thresholds: thresholds, suppressions: suppressions).evaluate(report)
  let violations = GateInvariants.violations(result)
  precondition(violations.isEmpty, "gate: \(violations)")
  fuzzLongMatches(suppressions, text: text)
}

/// The suppression matcher on long inputs: each pattern, and each pattern repeated to a few
/// thousand characters, against the input repeated to about 64 KiB. A matcher that is
/// super-linear in its input (278 s once, for 200,000 patterns and a 100,000-character type)
/// then overruns libFuzzer's per-input `-timeout` (scripts/fuzz), which saves the input as a
/// regression.
private func fuzzLongMatches(_ suppressions: SuppressionList, text: String) {
  guard !text.isEmpty else { return }
  var long = text
  while long.utf8.count < 1 << 16 { long += long }
  for suppression in suppressions.suppressions.prefix(8) {
    let pattern = suppression.glob.pattern
    _ = suppression.glob.matches(long)
    _ = suppression.matches(type: long, stack: [Frame(ip: 1, symbol: long)])
    guard !pattern.isEmpty, pattern.utf8.count < 4096 else { continue }
    let repeated = String(repeating: pattern, count: 4096 / pattern.utf8.count + 1)
    if let glob = try? Glob(repeated) { _ = glob.matches(long) }
  }
}
