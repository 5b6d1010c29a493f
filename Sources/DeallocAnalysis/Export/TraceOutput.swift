import DeallocLog
import Foundation

/// Where a streaming exporter sends its UTF-8 text, chunk by chunk.
///
/// Implementation requirements: `write` receives consecutive pieces of one document (a chunk
/// may end inside a multi-byte character; only the whole document is valid UTF-8); `finish`
/// is called once after the last piece and makes the document visible (a file output renames
/// its temporary file into place, so a failed export never leaves a half-written file behind).
public protocol TraceOutput {
  mutating func write(_ chunk: [UInt8]) throws(AnalysisError)
  mutating func finish() throws(AnalysisError)
}

/// Collects the document in memory (tests, small logs).
public struct StringTraceOutput: TraceOutput {
  private var bytes: [UInt8] = []

  /// The document written so far.
  public var text: String { String(decoding: bytes, as: UTF8.self) }

  public init() {}

  public mutating func write(_ chunk: [UInt8]) throws(AnalysisError) {
    bytes += chunk
  }

  public mutating func finish() throws(AnalysisError) {}
}

/// Writes to a file through a temporary sibling that replaces the file on ``finish()``, or
/// to standard output when the path is `nil` or `-`.
public final class FileTraceOutput: TraceOutput {
  private let path: String?
  private let temporaryPath: String?
  private let handle: FileHandle
  private var finished = false

  /// Opens the output.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)`` when it cannot be created.
  public init(path: String?) throws(AnalysisError) {
    guard let path, path != "-" else {
      self.path = nil
      self.temporaryPath = nil
      self.handle = FileHandle.standardOutput
      return
    }
    // An existing target that is not a regular file (`/dev/stdout`, a FIFO) is written in
    // place: renaming over it would replace a device node.
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
      guard let handle = FileHandle(forWritingAtPath: path) else {
        throw .outputUnwritable(path: path, reason: "cannot open it for writing")
      }
      self.path = nil
      self.temporaryPath = nil
      self.handle = handle
      return
    }
    let temporary = path + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
    guard FileManager.default.createFile(atPath: temporary, contents: nil),
      let handle = FileHandle(forWritingAtPath: temporary)
    else {
      throw .outputUnwritable(path: path, reason: "cannot create the file")
    }
    self.path = path
    self.temporaryPath = temporary
    self.handle = handle
  }

  deinit {
    // Not finished (an error stopped the export): leave no partial file behind.
    if let temporaryPath, !finished {
      try? handle.close()
      try? FileManager.default.removeItem(atPath: temporaryPath)
    }
  }

  public func write(_ chunk: [UInt8]) throws(AnalysisError) {
    do {
      try handle.write(contentsOf: chunk)
    } catch {
      throw .outputUnwritable(path: path ?? "<stdout>", reason: "\(error.localizedDescription)")
    }
  }

  public func finish() throws(AnalysisError) {
    guard let path, let temporaryPath, !finished else { return }
    finished = true
    do {
      try handle.close()
      if FileManager.default.fileExists(atPath: path) {
        try FileManager.default.removeItem(atPath: path)
      }
      try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
    } catch {
      throw .outputUnwritable(path: path, reason: "\(error.localizedDescription)")
    }
  }
}
