// A libFuzzer target for the analysis half: the log reader, the analyzer, the renderers and
// the CI gate, fed arbitrary bytes. `scripts/fuzz` compiles it together with the
// DeallocLog and DeallocAnalysis sources into one module (so it reaches internal API too) with
// `-sanitize=fuzzer,address`. Several files in one input: see `fileSeparator` below.
//
// The gate's suppressions come from the same input: every line that is not a JSON record
// is a suppression line (the reader skips it as malformed), so the seeds that join a log
// and a suppressions file exercise the gate with suppressions that match. The gate's
// verdict and every output (text, JSON, Markdown, JUnit, GitHub) must then hold
// `GateInvariants`; a violation is a crash, hence a regression input.
//
// The reader takes its input from paths, as the CLI does. An input is split at each ASCII
// record separator (0x1E, in no log) into up to `maximumFiles` files, each an unlinked
// temporary file (in /dev/shm, memory-backed) that the reader opens through
// `/proc/self/fd/N`, so the fuzzer exercises the same `read(2)` path as real logs. The files
// are read twice: into the analyzer inline, and through `PipelinedVisitor` (the reader of
// big inputs and directories) with batches of one to eight items, so that every file's
// name, event and warning lands at every place in a batch; the two reports must be equal.

#if canImport(Glibc)
  import Glibc
#endif

/// The byte that separates one file of the input from the next.
private let fileSeparator: UInt8 = 0x1E
private let maximumFiles = 8

/// The unlinked files that hold the current input's parts. (`memfd_create` is not imported
/// into Swift by Glibc; an unlinked file in /dev/shm is the same thing.)
private let inputFiles: [(descriptor: Int32, path: String)] = (0..<maximumFiles).map { _ in
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
}

private let renderers: [any ReportRenderer] = [
  TextRenderer(), JSONRenderer(), MarkdownRenderer(), HTMLRenderer(),
]

/// Writes `bytes` as the whole content of `file`; false when it cannot.
private func store(_ bytes: UnsafeBufferPointer<UInt8>, in file: Int32) -> Bool {
  guard ftruncate(file, 0) == 0 else { return false }
  var offset = 0
  while offset < bytes.count {
    let written = pwrite(file, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
    guard written > 0 else { return false }
    offset += written
  }
  return true
}

/// The input's parts, split at ``fileSeparator``: the last part keeps any further ones.
private func parts(of bytes: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
  var parts: [UnsafeBufferPointer<UInt8>] = []
  var start = 0
  for index in bytes.indices where bytes[index] == fileSeparator {
    guard parts.count < maximumFiles - 1 else { break }
    parts.append(UnsafeBufferPointer(rebasing: bytes[start..<index]))
    start = index + 1
  }
  parts.append(UnsafeBufferPointer(rebasing: bytes[start...]))
  return parts
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data ?? UnsafePointer(bitPattern: 1)!, count: size)
  let split = parts(of: bytes)
  var inputs: [LogInput] = []
  for (index, part) in split.enumerated() {
    guard store(part, in: inputFiles[index].descriptor) else { return 0 }
    inputs.append(LogInput(path: inputFiles[index].path))
  }
  var reader = LogReader()
  var analyzer = Analyzer()
  var inlineError: String?
  do {
    try reader.read(inputs, into: &analyzer)
  } catch {
    // Unusable input must come out as a one-line message naming the input.
    let message = error.description
    precondition(!message.isEmpty && !message.contains("\n"), "bad error message: \(message)")
    inlineError = message
  }
  let names = inputs.map(\.displayName)
  let report = analyzer.finish(inputs: names)
  for renderer in renderers {
    _ = renderer.render(report)
  }
  fuzzPipelined(inputs, batchSize: 1 + size % 8, expecting: report, error: inlineError)
  let text = data.map {
    String(decoding: UnsafeBufferPointer(start: $0, count: size), as: UTF8.self)
  }
  fuzzGate(report, text: text ?? "", variant: size % 3)
  return 0
}

/// Reads `inputs` again through ``PipelinedVisitor`` with batches of `batchSize` items: the
/// same error, if any, and the same report as the inline read.
private func fuzzPipelined(
  _ inputs: [LogInput], batchSize: Int, expecting expected: Report, error expectedError: String?
) {
  var reader = LogReader()
  var pipelined = PipelinedVisitor(Analyzer(), batchSize: batchSize)
  var thrown: String?
  do {
    try reader.read(inputs, into: &pipelined)
  } catch {
    thrown = error.description
  }
  let analyzer: Analyzer
  do {
    analyzer = try pipelined.finish()
  } catch {
    // The analyzer's own error, which the inline read must have stopped with too.
    precondition(error.description == expectedError, "pipelined: \(error.description)")
    return
  }
  precondition(
    thrown == expectedError,
    "pipelined: \(thrown ?? "no error") against inline: \(expectedError ?? "no error")")
  let report = analyzer.finish(inputs: inputs.map(\.displayName))
  let json = JSONRenderer()
  precondition(
    json.render(report) == json.render(expected),
    "the pipelined report (batches of \(batchSize)) differs from the inline one")
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
