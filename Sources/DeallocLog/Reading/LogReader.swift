/// Streams v1 logs to a ``LogVisitor``, one record at a time.
///
/// Why a visitor: the reader never holds more than one line, so every consumer (the
/// analyzer, `explain`, an exporter) decides what to keep, and memory grows only with
/// what it keeps. A consumer that needs two passes (for example an exporter that needs the
/// report's totals first) simply reads the inputs twice; standard input can be read once.
///
/// Tolerance, per the contract: a malformed line is a warning and is skipped; a cut-off
/// last line is a warning and marks its session truncated; unknown kinds are counted per
/// session. Unusable input (missing, unreadable, empty, no `session` record, an unsupported
/// `v`) throws ``AnalysisError``.
public struct LogReader {
  /// The log versions this reader understands.
  public static let supportedVersions: ClosedRange<Int> = 1...1

  /// Bytes read so far, across inputs.
  public private(set) var bytesRead = 0
  /// Sessions started so far, across inputs.
  public private(set) var sessionCount = 0

  /// Called with ``bytesRead`` plus the current input's bytes each time the reader has read
  /// another chunk, on the reading thread: a progress line for big inputs.
  public var progress: ((Int) -> Void)?

  private var parser = RecordParser()

  public init() {}

  /// Reads every input in order and delivers its events to `visitor`.
  public mutating func read<V: LogVisitor>(_ inputs: [LogInput], into visitor: inout V)
    throws(AnalysisError)
  {
    for input in inputs {
      try read(input, into: &visitor)
    }
  }

  /// Reads one input.
  public mutating func read<V: LogVisitor>(_ input: LogInput, into visitor: inout V)
    throws(AnalysisError)
  {
    let source = try LineSource(input)
    var state = InputState(file: input.displayName, firstSessionIndex: sessionCount)
    var reported = 0
    while let line = try source.next() {
      if let progress, source.bytesRead != reported {
        reported = source.bytesRead
        progress(bytesRead + reported)
      }
      state.lineNumber += 1
      state.sawAnyLine = true
      guard let content = Self.content(of: line, &state, &visitor) else { continue }
      if state.inSession, try deliverHot(content.bytes, &state, &visitor) { continue }
      guard let record = try parse(content.bytes, isLast: content.isLast, &state, &visitor)
      else { continue }
      try deliver(record, &state, &visitor)
    }
    bytesRead += source.bytesRead
    try finish(&state, &visitor)
  }

  /// What the reader knows about one input while reading it, so that the per-line steps
  /// can be functions of their own rather than closures over a dozen locals.
  private struct InputState {
    var file: String { location.file }
    /// ``sessionCount`` when the input began: an input that adds none has no session.
    let firstSessionIndex: Int
    /// The current line's location, kept rather than built per record: built per record, it
    /// retained and released the file name's storage for every line.
    private(set) var location: LogLocation
    var lineNumber: Int {
      get { location.line }
      set { location.line = newValue }
    }
    var sawAnyLine = false
    /// The session being read. Not an Optional: every record updates it, and mutating
    /// through `session!` cost a copy and a destroy of the whole struct per line (3 % of a
    /// report).
    var session = SessionEnding(
      index: -1, lastTime: 0, end: nil, truncated: false, unknownKinds: [:], malformedLines: 0,
      records: 0, lastLine: 0)
    var inSession = false
    var recordsBeforeSession = 0
    var firstLineBeforeSession = 0
    /// Records after the current session's `end`: still read, but said once per session.
    var endLine = 0
    var afterEnd = 0
    var firstAfterEnd = 0

    init(file: String, firstSessionIndex: Int) {
      self.firstSessionIndex = firstSessionIndex
      location = LogLocation(file: file, line: 0)
    }
  }

  /// The bytes of a line worth parsing, and whether it is the input's unterminated last
  /// line; `nil` for a blank line or one too long to hold (which is a warning).
  @inline(__always)
  private static func content<V: LogVisitor>(
    of line: LineSource.Line, _ state: inout InputState, _ visitor: inout V
  ) -> (bytes: UnsafeBufferPointer<UInt8>, isLast: Bool)? {
    var bytes: UnsafeBufferPointer<UInt8>
    var isLast = false
    switch line {
    case .complete(let b): bytes = b
    case .unterminated(let b):
      bytes = b
      isLast = true
    case .tooLong:
      if state.inSession { state.session.malformedLines += 1 }
      visitor.warn(
        LogWarning(.malformedLine, at: state.location, "line longer than 64 MiB; skipped"))
      return nil
    }
    if state.lineNumber == 1 { bytes = droppingByteOrderMark(bytes) }
    if isBlank(bytes) { return nil }
    return (bytes, isLast)
  }

  /// The line's record, or `nil` when it is not one (a warning); a bad `v` throws, since
  /// the whole input is then unreadable.
  @inline(__always)
  private mutating func parse<V: LogVisitor>(
    _ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, _ state: inout InputState,
    _ visitor: inout V
  ) throws(AnalysisError) -> LogRecord? {
    do {
      return try parser.parse(bytes)
    } catch {
      try Self.skipUnparsed(error, isLast: isLast, &state, &visitor)
      return nil
    }
  }

  /// Warns about a line that is not a record: cut short when it is the last, malformed
  /// otherwise. Kept out of line: the common path never comes here.
  private static func skipUnparsed<V: LogVisitor>(
    _ error: RecordParser.Failure, isLast: Bool, _ state: inout InputState, _ visitor: inout V
  ) throws(AnalysisError) {
    if error.isVersion {
      throw .invalidVersion(path: state.file, line: state.lineNumber, found: error.message)
    }
    if isLast {
      if state.inSession { state.session.truncated = true }
      visitor.warn(
        LogWarning(
          .truncatedLine, at: state.location,
          "the last line is cut short (the process stopped mid-write); its session is incomplete"
        ))
    } else {
      if state.inSession { state.session.malformedLines += 1 }
      visitor.warn(
        LogWarning(
          .malformedLine, at: state.location, "malformed line skipped: \(error.message)"))
    }
  }

  /// Hands an enqueue or release line in the recorder's shape to `visitor` as its record
  /// alone (``LogVisitor/visitEnqueue(_:at:)``), with the tallies ``deliver(_:_:_:)`` keeps;
  /// `false` for any other line, which goes the general way.
  ///
  /// Why apart: wrapped in a ``LogRecord`` and a ``LogEvent``, each of these records was
  /// copied, switched on and destroyed as a record of any kind at every step to the analyzer.
  @inline(__always)
  private mutating func deliverHot<V: LogVisitor>(
    _ bytes: UnsafeBufferPointer<UInt8>, _ state: inout InputState, _ visitor: inout V
  ) throws(AnalysisError) -> Bool {
    guard let line = RecorderShapeParser.hotLine(bytes) else { return false }
    var cursor = line.cursor
    switch line.kind {
    case .enqueue:
      guard let enqueue = parser.enqueue(after: &cursor) else { return false }
      Self.count(at: enqueue.time, &state)
      try visitor.visitEnqueue(enqueue, at: state.location)
    case .release:
      guard let release = cursor.finishRelease() else { return false }
      Self.count(at: release.time, &state)
      try visitor.visitRelease(release, at: state.location)
    }
    return true
  }

  /// The session's tallies for a record it delivers, at `time` when the record has one.
  @inline(__always)
  private static func count(at time: Int64?, _ state: inout InputState) {
    state.session.lastLine = state.lineNumber
    if let time, time > state.session.lastTime { state.session.lastTime = time }
    if state.endLine > 0 {
      if state.afterEnd == 0 { state.firstAfterEnd = state.lineNumber }
      state.afterEnd += 1
    }
    state.session.records += 1
  }

  /// Hands a record to `visitor` and keeps the session's tallies: a `session` record starts
  /// a session, records before the first are counted and skipped, unknown kinds are counted.
  @inline(__always)
  private mutating func deliver<V: LogVisitor>(
    _ record: consuming LogRecord, _ state: inout InputState, _ visitor: inout V
  ) throws(AnalysisError) {
    if case .session(let header) = record {
      try beginSession(header, &state, &visitor)
      return
    }
    guard state.inSession else {
      if state.recordsBeforeSession == 0 { state.firstLineBeforeSession = state.lineNumber }
      state.recordsBeforeSession += 1
      return
    }
    if case .unknown(let kind) = record {
      state.session.lastLine = state.lineNumber
      state.session.unknownKinds[kind, default: 0] += 1
      return
    }
    Self.count(at: record.time, &state)
    if case .end(let end) = record {
      state.session.end = end
      state.endLine = state.lineNumber
    }
    if case .cut(let cut) = record { state.session.cut = cut }
    try visitor.visit(.record(consume record), at: state.location)
  }

  /// Ends the session being read, if any, and starts the one `header` opens.
  private mutating func beginSession<V: LogVisitor>(
    _ header: SessionRecord, _ state: inout InputState, _ visitor: inout V
  ) throws(AnalysisError) {
    guard Self.supportedVersions.contains(header.version) else {
      throw .unsupportedVersion(
        path: state.file, line: state.lineNumber, version: String(header.version))
    }
    try Self.endSession(&state, &visitor)
    let info = SessionInfo(
      index: sessionCount, file: state.file, line: state.lineNumber, record: header)
    state.session = SessionEnding(
      index: sessionCount, lastTime: header.time, end: nil, truncated: false, unknownKinds: [:],
      malformedLines: 0, records: 0, lastLine: state.lineNumber)
    state.inSession = true
    sessionCount += 1
    try visitor.visit(.sessionBegan(info), at: state.location)
  }

  /// After the last line: an input without lines or sessions throws; otherwise the records
  /// before the first session are said once and the last session ends.
  private func finish<V: LogVisitor>(_ state: inout InputState, _ visitor: inout V)
    throws(AnalysisError)
  {
    if !state.sawAnyLine { throw .inputEmpty(path: state.file) }
    if sessionCount == state.firstSessionIndex { throw .noSession(path: state.file) }
    if state.recordsBeforeSession > 0 {
      visitor.warn(
        LogWarning(
          .recordBeforeSession,
          at: LogLocation(file: state.file, line: state.firstLineBeforeSession),
          "\(state.recordsBeforeSession) record(s) before the first 'session' record skipped"))
    }
    try Self.endSession(&state, &visitor)
  }

  /// Says what the session's tallies mean (unknown kinds, lost records, records after its
  /// `end`, a cut) and delivers its end; nothing when no session is open.
  private static func endSession<V: LogVisitor>(_ state: inout InputState, _ visitor: inout V)
    throws(AnalysisError)
  {
    guard state.inSession else { return }
    let ending = state.session
    let file = state.file
    if !ending.unknownKinds.isEmpty {
      let list = ending.unknownKinds.sorted { $0.key < $1.key }
        .map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
      let total = ending.unknownKinds.values.reduce(0, +)
      visitor.warn(
        LogWarning(
          .unknownKinds, at: nil,
          "\(file): session \(ending.index + 1): skipped \(total) record(s) of unknown kinds: \(list)"
        ))
    }
    if let end = ending.end, end.lost > 0 {
      visitor.warn(
        LogWarning(
          .lostRecords, at: nil,
          "\(file): session \(ending.index + 1): the recorder lost \(end.lost) record(s);"
            + " counts may be off"))
    }
    if state.afterEnd > 0 {
      visitor.warn(
        LogWarning(
          .inconsistentRecord, at: LogLocation(file: file, line: state.firstAfterEnd),
          "\(state.afterEnd) record(s) after the session's 'end' (line \(state.endLine)); read"
            + " as part of the session"))
      state.afterEnd = 0
    }
    if let cut = ending.cut {
      visitor.warn(LogWarning(.logCut, at: nil, cutMessage(cut, ending, file: file)))
    }
    state.endLine = 0
    state.inSession = false
    try visitor.visit(.sessionEnded(ending), at: LogLocation(file: file, line: ending.lastLine))
  }

  /// `bytes` without a leading UTF-8 byte order mark, which some editors and Windows tools
  /// write; JSON forbids it, and read as part of the first record it made the whole log
  /// "no 'session' record".
  private static func droppingByteOrderMark(_ bytes: UnsafeBufferPointer<UInt8>)
    -> UnsafeBufferPointer<UInt8>
  {
    guard bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF else {
      return bytes
    }
    return UnsafeBufferPointer(rebasing: bytes[3...])
  }

  /// What a cut means for the verdicts, in one warning.
  private static func cutMessage(_ cut: CutRecord, _ ending: SessionEnding, file: String) -> String
  {
    let limit = cut.maxSize.map { " of \($0) bytes" } ?? ""
    let unwritten = ending.end.map { ", \($0.unwritten) record(s) not written" } ?? ""
    return
      "\(file): session \(ending.index + 1): the log was cut at its size limit\(limit)"
      + " (DEALLOCTRACE_MAX_SIZE) at \(TimeFormatting.format(cut.time))\(unwritten): objects"
      + " enqueued after the cut are missing, and objects whose release or dealloc came after"
      + " it show as never released, stuck or leaked; their fates are unknown"
  }

  private static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte != 0x20 && byte != 0x09 && byte != 0x0D { return false }
    return true
  }
}
