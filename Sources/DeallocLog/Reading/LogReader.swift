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
    let file = input.displayName
    var lineNumber = 0
    // The session being read. Not an Optional: every record updates it, and mutating through
    // `session!` cost a copy and a destroy of the whole struct per line (3 % of a report).
    var session = SessionEnding(
      index: -1, lastTime: 0, end: nil, truncated: false, unknownKinds: [:], malformedLines: 0,
      records: 0, lastLine: 0)
    var inSession = false
    var recordsBeforeSession = 0
    var firstLineBeforeSession = 0
    var sawAnyLine = false
    let firstSessionIndex = sessionCount
    // Records after the current session's `end`: still read, but said once per session.
    var endLine = 0
    var afterEnd = 0
    var firstAfterEnd = 0

    func endSession(_ visitor: inout V) throws(AnalysisError) {
      guard inSession else { return }
      let ending = session
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
      if afterEnd > 0 {
        visitor.warn(
          LogWarning(
            .inconsistentRecord, at: LogLocation(file: file, line: firstAfterEnd),
            "\(afterEnd) record(s) after the session's 'end' (line \(endLine)); read as part of"
              + " the session"))
        afterEnd = 0
      }
      if let cut = ending.cut {
        visitor.warn(LogWarning(.logCut, at: nil, Self.cutMessage(cut, ending, file: file)))
      }
      endLine = 0
      inSession = false
      try visitor.visit(.sessionEnded(ending), at: LogLocation(file: file, line: ending.lastLine))
    }

    var reported = 0
    while let line = try source.next() {
      if let progress, source.bytesRead != reported {
        reported = source.bytesRead
        progress(bytesRead + reported)
      }
      lineNumber += 1
      sawAnyLine = true
      let location = LogLocation(file: file, line: lineNumber)
      var bytes: UnsafeBufferPointer<UInt8>
      var isLast = false
      switch line {
      case .complete(let b): bytes = b
      case .unterminated(let b):
        bytes = b
        isLast = true
      case .tooLong:
        if inSession { session.malformedLines += 1 }
        visitor.warn(LogWarning(.malformedLine, at: location, "line longer than 64 MiB; skipped"))
        continue
      }
      if lineNumber == 1 { bytes = Self.droppingByteOrderMark(bytes) }
      if isBlank(bytes) { continue }
      let record: LogRecord
      do {
        record = try parser.parse(bytes)
      } catch {
        if error.isVersion {
          throw .invalidVersion(path: file, line: lineNumber, found: error.message)
        }
        if isLast {
          if inSession { session.truncated = true }
          visitor.warn(
            LogWarning(
              .truncatedLine, at: location,
              "the last line is cut short (the process stopped mid-write); its session is incomplete"
            ))
        } else {
          if inSession { session.malformedLines += 1 }
          visitor.warn(
            LogWarning(.malformedLine, at: location, "malformed line skipped: \(error.message)"))
        }
        continue
      }
      if case .session(let header) = record {
        guard Self.supportedVersions.contains(header.version) else {
          throw .unsupportedVersion(path: file, line: lineNumber, version: String(header.version))
        }
        try endSession(&visitor)
        let info = SessionInfo(index: sessionCount, file: file, line: lineNumber, record: header)
        session = SessionEnding(
          index: sessionCount, lastTime: header.time, end: nil, truncated: false, unknownKinds: [:],
          malformedLines: 0, records: 0, lastLine: lineNumber)
        inSession = true
        sessionCount += 1
        try visitor.visit(.sessionBegan(info), at: location)
        continue
      }
      guard inSession else {
        if recordsBeforeSession == 0 { firstLineBeforeSession = lineNumber }
        recordsBeforeSession += 1
        continue
      }
      session.lastLine = lineNumber
      if case .unknown(let kind) = record {
        session.unknownKinds[kind, default: 0] += 1
        continue
      }
      if let t = record.time, t > session.lastTime { session.lastTime = t }
      if endLine > 0 {
        if afterEnd == 0 { firstAfterEnd = lineNumber }
        afterEnd += 1
      }
      if case .end(let end) = record {
        session.end = end
        endLine = lineNumber
      }
      if case .cut(let cut) = record { session.cut = cut }
      session.records += 1
      try visitor.visit(.record(record), at: location)
    }
    bytesRead += source.bytesRead
    if !sawAnyLine { throw .inputEmpty(path: file) }
    if sessionCount == firstSessionIndex { throw .noSession(path: file) }
    if recordsBeforeSession > 0 {
      visitor.warn(
        LogWarning(
          .recordBeforeSession, at: LogLocation(file: file, line: firstLineBeforeSession),
          "\(recordsBeforeSession) record(s) before the first 'session' record skipped"))
    }
    try endSession(&visitor)
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

  private func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte != 0x20 && byte != 0x09 && byte != 0x0D { return false }
    return true
  }
}
